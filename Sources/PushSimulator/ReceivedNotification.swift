import PushCore

/// One notification the simulator accepted (answered 200).
public struct ReceivedNotification: Sendable, Equatable {
    /// Token, topic, push type, priority, expiration, collapse id, apns-id and payload as received.
    /// Missing headers appear with APNs' defaults (push type alert, priority 10).
    public var request: NotificationRequest
    /// The `apns-unique-id` the simulator answered with.
    public var uniqueId: String
    /// True when the request had no `apns-id` and the simulator made one up.
    public var apnsIdGenerated: Bool
    /// When it was accepted, in ms since 1970 (the configured clock).
    public var receivedAtMs: Int64
    /// The `apns-channel-id` of a broadcast (`POST /4/broadcasts/apps/{bundle-id}`), nil for device sends.
    /// For a broadcast, `request.token` is empty, `request.topic` is the bundle id from the path and
    /// `request.notificationId` the `apns-request-id` (given or made up).
    public var channelId: String?
    /// The SHA-256 of the client certificate the connection presented (DER, lowercase hex), nil on a connection
    /// without one (provider-token authentication): which certificate a provider used, e.g. a renewed one after a
    /// reload, without trusting the provider's word for it.
    public var clientCertificateSHA256: String?

    /// Creates a record.
    public init(
        request: NotificationRequest, uniqueId: String, apnsIdGenerated: Bool, receivedAtMs: Int64,
        channelId: String? = nil, clientCertificateSHA256: String? = nil
    ) {
        self.clientCertificateSHA256 = clientCertificateSHA256
        self.request = request
        self.uniqueId = uniqueId
        self.apnsIdGenerated = apnsIdGenerated
        self.receivedAtMs = receivedAtMs
        self.channelId = channelId
    }

    /// The record as one compact JSON object (the `--record` file's line format):
    /// `{"service":"apns","token","topic","pushType","priority","expiration","collapseId","apnsId","uniqueId","receivedAt","payload","channelId","clientCertificate"}`
    /// (`token` null and `channelId` set for broadcasts; `channelId` null for device sends).
    public func jsonLine(into out: inout [UInt8]) {
        func key(_ k: String) {
            JSONValue.string(k).encode(into: &out)
            out.append(UInt8(ascii: ":"))
        }
        func str(_ s: String?) {
            if let s { JSONValue.string(s).encode(into: &out) } else { out.append(contentsOf: "null".utf8) }
        }
        out.append(UInt8(ascii: "{"))
        key("service"); str("apns"); out.append(UInt8(ascii: ","))
        key("token"); str(channelId == nil ? request.token.hex : nil); out.append(UInt8(ascii: ","))
        key("topic"); str(request.topic); out.append(UInt8(ascii: ","))
        key("pushType"); str(request.pushType.rawValue); out.append(UInt8(ascii: ","))
        key("priority"); out.append(contentsOf: String(request.priority.rawValue).utf8); out.append(UInt8(ascii: ","))
        key("expiration")
        if let e = request.expiration { out.append(contentsOf: String(e).utf8) } else { out.append(contentsOf: "null".utf8) }
        out.append(UInt8(ascii: ","))
        key("collapseId"); str(request.collapseId); out.append(UInt8(ascii: ","))
        key("apnsId"); str(request.notificationId); out.append(UInt8(ascii: ","))
        key("uniqueId"); str(uniqueId); out.append(UInt8(ascii: ","))
        key("receivedAt"); out.append(contentsOf: String(receivedAtMs).utf8); out.append(UInt8(ascii: ","))
        // The payload was validated as a JSON object, so it is embedded verbatim.
        key("payload"); out.append(contentsOf: request.payload); out.append(UInt8(ascii: ","))
        key("channelId"); str(channelId); out.append(UInt8(ascii: ","))
        key("clientCertificate"); str(clientCertificateSHA256)
        out.append(UInt8(ascii: "}"))
    }
}

/// What the simulator has seen since it started.
public struct SimulatorCounters: Sendable, Equatable {
    /// Complete requests answered (any status).
    public var requests = 0
    /// Notifications accepted: APNs requests answered 200, Web Push and UnifiedPush messages answered 201, FCM and
    /// Push Kit messages answered 200.
    public var accepted = 0
    /// Web Push messages accepted (answered 201, decrypted and recorded).
    public var webPushesAccepted = 0
    /// UnifiedPush messages accepted (answered 201, decrypted and recorded).
    public var unifiedPushesAccepted = 0
    /// FCM messages accepted (answered 200 by `messages:send`, not `validate_only`).
    public var fcmMessagesAccepted = 0
    /// Access tokens the OAuth token endpoint granted.
    public var accessTokensGranted = 0
    /// Huawei Push Kit messages accepted, one per token delivered (answered 200 by `messages:send`, not
    /// `validate_only`).
    public var hmsMessagesAccepted = 0
    /// Access tokens Huawei's OAuth endpoint (`/oauth2/v3/token`) granted.
    public var hmsAccessTokensGranted = 0
    /// Answers by HTTP status.
    public var byStatus: [Int: Int] = [:]
    /// Rejections by reason string.
    public var byReason: [String: Int] = [:]
    /// Streams answered RST_STREAM REFUSED_STREAM (stream-limit fault, or an excess stream under
    /// ``SimulatorFaults/ExcessStreamAnswer/refuse``).
    public var refusedStreams = 0
    /// Streams a client opened over the connection's stream limit (``SimulatorFaults/excessStream`` says how they were
    /// answered): a client that honours SETTINGS_MAX_CONCURRENT_STREAMS opens none.
    public var excessStreams = 0
    /// Connections closed for a stream over the limit (``SimulatorFaults/ExcessStreamAnswer/closeConnection``).
    public var excessClosures = 0
    /// SETTINGS frames sent by the stream-limit change fault (``SimulatorFaults/streamLimitChange``).
    public var streamLimitChanges = 0
    /// Streams answered RST_STREAM PROTOCOL_ERROR for a malformed header block.
    public var malformedStreams = 0
    /// GOAWAY frames sent by the GOAWAY fault.
    public var goAways = 0
    /// Connections reset by the reset fault.
    public var resets = 0
    /// TCP connections accepted (including black-holed ones).
    public var connections = 0
    /// TLS handshakes reset by the handshake-reset fault.
    public var handshakeResets = 0
    /// Socket reads held back by read pacing (``SimulatorConfiguration/readPacing``): none when it is off.
    public var heldReads = 0

    /// Creates empty counters.
    public init() {}

    /// A multi-line human summary (printed by `pushctl simulator` on SIGINT/SIGTERM).
    public var summary: String {
        var lines = ["simulator: \(requests) requests, \(accepted) accepted, \(connections) connections"]
        for status in byStatus.keys.sorted() { lines.append("  status \(status): \(byStatus[status]!)") }
        for reason in byReason.keys.sorted() { lines.append("  \(reason): \(byReason[reason]!)") }
        if webPushesAccepted > 0 { lines.append("  web push messages accepted: \(webPushesAccepted)") }
        if unifiedPushesAccepted > 0 { lines.append("  UnifiedPush messages accepted: \(unifiedPushesAccepted)") }
        if fcmMessagesAccepted > 0 { lines.append("  FCM messages accepted: \(fcmMessagesAccepted)") }
        if accessTokensGranted > 0 { lines.append("  access tokens granted: \(accessTokensGranted)") }
        if hmsMessagesAccepted > 0 { lines.append("  HMS messages accepted: \(hmsMessagesAccepted)") }
        if hmsAccessTokensGranted > 0 { lines.append("  HMS access tokens granted: \(hmsAccessTokensGranted)") }
        if refusedStreams > 0 { lines.append("  refused streams: \(refusedStreams)") }
        if excessStreams > 0 { lines.append("  streams over the stream limit: \(excessStreams)") }
        if excessClosures > 0 { lines.append("  connections closed for a stream over the limit: \(excessClosures)") }
        if malformedStreams > 0 { lines.append("  malformed streams: \(malformedStreams)") }
        if goAways > 0 { lines.append("  GOAWAYs sent: \(goAways)") }
        if resets > 0 { lines.append("  connections reset: \(resets)") }
        if handshakeResets > 0 { lines.append("  TLS handshakes reset: \(handshakeResets)") }
        return lines.joined(separator: "\n")
    }
}
