import Foundation
import PushCore
import Synchronization

/// The simulator's Web Push service (RFC 8030 push resources, RFC 8291 encryption, RFC 8292 VAPID), the same for
/// HTTP/2 and HTTP/1.1 connections: one request in, one answer out, the accepted message recorded.
///
/// Routes: `POST /wp/<id>` (push a message), `POST /subscribe` (RFC 8030 §4: mint a subscription, optionally
/// restricted to an applicationServerKey by an `application/webpush-options+json` body `{"vapid": KEY}`, RFC 8292
/// §4.1) and `DELETE /subscription/<id>` (RFC 8030 §7.3: unsubscribe; later pushes answer 410).
final class WebPushService: Sendable {
    /// An answer, whichever HTTP version carries it.
    struct Response: Sendable, Equatable {
        var status: Int
        /// Lowercase names.
        var headers: [(String, String)] = []
        var body: [UInt8] = []

        static func == (a: Response, b: Response) -> Bool {
            a.status == b.status && a.body == b.body && a.headers.map(\.0) == b.headers.map(\.0)
                && a.headers.map(\.1) == b.headers.map(\.1)
        }
    }

    /// The largest body a push message may have (RFC 8030 §7.2: at least 4096 must be accepted; RFC 8291 §4: the
    /// encrypted record with its header in 4096).
    static let maximumBodyBytes = 4096
    /// The longest TTL the service keeps a message (28 days); longer ones are accepted and answered with this.
    static let maximumTTL = 28 * 24 * 3600
    /// The Retry-After of the 429 and 503 faults, in seconds.
    static let retryAfterSeconds = 1

    let subscriptions = WebPushSubscriptionStore()
    private let recorder: SimulatorRecorder
    private let clock: @Sendable () -> Int64
    /// The interface the simulator listens on, for ``defaultOrigin()``.
    private let host: String
    /// The port it listens on (set by ``PushSimulator/start()``).
    let port = Atomic<Int>(0)

    init(recorder: SimulatorRecorder, clock: @escaping @Sendable () -> Int64, host: String) {
        self.recorder = recorder
        self.clock = clock
        self.host = host
    }

    /// `https://host:port` of the listener, for subscriptions minted without a request
    /// (``PushSimulator/mintWebPushSubscription(applicationServerKey:)``): a wildcard address becomes loopback.
    func defaultOrigin() -> String {
        let name: String
        switch host {
        case "0.0.0.0", "": name = "127.0.0.1"
        case "::": name = "[::1]"
        default: name = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        }
        return "https://" + Self.origin(authority: "\(name):\(port.load(ordering: .relaxed))")
    }

    /// True for the paths this service answers.
    static func handles(path: String?) -> Bool {
        guard let path else { return false }
        return path.hasPrefix("/wp/") || path == "/subscribe" || path.hasPrefix("/subscription/")
    }

    /// Mints a subscription on the simulator's own origin.
    func mint(applicationServerKey: [UInt8]?) -> MintedSubscription {
        subscriptions.mint(origin: defaultOrigin(), applicationServerKey: applicationServerKey)
    }

    /// Answers one complete request. `chance` draws the fault dice; `cache` holds the connection's last VAPID
    /// header that verified (a sender reuses one token per origin, so most requests pay a string compare).
    func respond(
        to request: RequestValidator.Head, body: [UInt8], faults: SimulatorFaults, chance: (Double) -> Bool,
        cache: inout VAPIDVerifier.Verified?
    ) -> Response {
        let path = request.path ?? ""
        if path == "/subscribe" { return subscribe(request, body: body) }
        if path.hasPrefix("/subscription/") { return unsubscribe(request, id: String(path.dropFirst("/subscription/".count))) }
        // An overloaded service answers before looking at the request, as the APNs faults do.
        if chance(faults.tooManyRequestsFraction) {
            return reject(.init(.tooManyRequests, "too many requests (simulated)"), retryAfter: true)
        }
        if chance(faults.serviceUnavailableFraction) {
            return reject(.init(.serviceUnavailable, "service unavailable (simulated)"), retryAfter: true)
        }
        switch accept(request, id: String(path.dropFirst("/wp/".count)), body: body, cache: &cache) {
        case .failure(let rejection):
            return reject(rejection)
        case .success(let (message, origin)):
            recorder.answered(webPush: message)
            return Response(status: 201, headers: [
                ("location", origin + "/m/" + message.messageId), ("ttl", String(message.ttl)), ("content-length", "0"),
            ])
        }
    }

    /// RFC 8030 §5 and RFC 8291/8292's rules, in the order they are reported: the push resource, the method, the
    /// VAPID credentials, the headers, the content coding, the size, then the body itself.
    private func accept(
        _ request: RequestValidator.Head, id: String, body: [UInt8], cache: inout VAPIDVerifier.Verified?
    ) -> Result<(ReceivedWebPush, String), WebPushRejection> {
        guard let entry = subscriptions.entry(id) else {
            return .failure(.init(.notFound, "no push subscription \(id)"))
        }
        guard request.method == "POST" else {
            return .failure(.init(.methodNotAllowed, "a push resource takes POST, not \(request.method ?? "nothing")"))
        }
        if entry.expired { return .failure(.init(.unregistered, "push subscription \(id) has expired")) }
        if request.duplicate { return .failure(.init(.duplicateHeaders, "a header appears more than once")) }

        let now = clock()
        let verified: VAPIDVerifier.Verified
        switch vapid(request, entry: entry, nowMs: now, cache: &cache) {
        case .failure(let rejection): return .failure(rejection)
        case .success(let checked): verified = checked
        }
        let origin = entry.subscription.origin
        guard request.ttl != nil else { return .failure(.init(.badTTL, "no TTL header (RFC 8030 §5.2 requires it)")) }
        let ttl: Int
        switch Self.pushHeaders(request) {
        case .failure(let rejection): return .failure(rejection)
        case .success(let seconds): ttl = seconds ?? 0
        }

        var plaintext: [UInt8] = []
        if !body.isEmpty || request.contentEncoding != nil {
            guard request.contentEncoding?.lowercased() == "aes128gcm" else {
                return .failure(.init(
                    .unsupportedContentEncoding,
                    "Content-Encoding must be aes128gcm (RFC 8291), not \(request.contentEncoding.map { "`\($0)`" } ?? "missing")"))
            }
            guard body.count <= Self.maximumBodyBytes else {
                return .failure(.init(.payloadTooLarge, "the body is \(body.count) bytes; at most \(Self.maximumBodyBytes)"))
            }
            do {
                plaintext = try WebPushDecryptor.decrypt(body: body, privateKey: entry.privateKey, authSecret: entry.authSecret)
            } catch {
                return .failure(.init(.decryptionFailed, "the body does not decrypt: \(error.description)"))
            }
        }
        let message = ReceivedWebPush(
            subscriptionId: id, plaintext: plaintext, ttl: min(ttl, Self.maximumTTL), urgency: request.urgency,
            topic: request.webPushTopic, subject: verified.subject, vapidKey: StrictBase64URL.encode(verified.key),
            messageId: UUID().uuidString.lowercased(), receivedAtMs: now)
        return .success((message, origin))
    }

    /// RFC 8292 as a push resource checks it: the `Authorization` header verified (or the connection's `cache`, the
    /// last header that verified), its audience `entry`'s origin, its `exp` current, and `k` the key the entry was
    /// restricted to.
    func vapid(
        _ request: RequestValidator.Head, entry: WebPushSubscriptionStore.Entry, nowMs: Int64, cache: inout VAPIDVerifier.Verified?
    ) -> Result<VAPIDVerifier.Verified, WebPushRejection> {
        let verified: VAPIDVerifier.Verified
        if let cached = cache, cached.authorization == request.authorization {
            verified = cached
        } else {
            switch VAPIDVerifier.verify(authorization: request.authorization) {
            case .failure(let rejection): return .failure(rejection)
            case .success(let fresh):
                verified = fresh
                cache = fresh
            }
        }
        if let rejection = VAPIDVerifier.check(verified, origin: entry.subscription.origin, nowMs: nowMs) { return .failure(rejection) }
        if let restricted = entry.applicationServerKey, restricted != verified.key {
            return .failure(.init(
                .vapidKeyMismatch,
                "k is not the applicationServerKey this subscription was made for (\(StrictBase64URL.encode(restricted)))"))
        }
        return .success(verified)
    }

    /// RFC 8030 §5.2–5.4's headers: the `TTL` in seconds (nil when absent), a valid `Urgency` and `Topic` if present.
    static func pushHeaders(_ request: RequestValidator.Head) -> Result<Int?, WebPushRejection> {
        var ttl: Int? = nil
        if let ttlText = request.ttl {
            guard !ttlText.isEmpty, ttlText.utf8.count <= 10, ttlText.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let seconds = Int(ttlText)
            else { return .failure(.init(.badTTL, "TTL must be a number of seconds, not `\(ttlText)`")) }
            ttl = seconds
        }
        if let urgency = request.urgency, !["very-low", "low", "normal", "high"].contains(urgency) {
            return .failure(.init(.badUrgency, "Urgency must be very-low, low, normal or high, not `\(urgency)`"))
        }
        if let topic = request.webPushTopic, topic.isEmpty || topic.utf8.count > 32 || !topic.utf8.allSatisfy(StrictBase64URL.isAlphabet) {
            return .failure(.init(.badTopic, "Topic must be 1-32 characters of the base64url alphabet, not `\(topic)`"))
        }
        return .success(ttl)
    }

    /// A subscribe request's body: empty (no restriction) or `{"vapid": "<applicationServerKey>"}` (RFC 8292 §4.1),
    /// the key an uncompressed P-256 point in base64url.
    static func applicationServerKey(options body: [UInt8]) -> Result<[UInt8]?, WebPushRejection> {
        guard !body.isEmpty else { return .success(nil) }
        guard let options = try? JSONValue(parsing: body), case .object(let pairs) = options, pairs.allSatisfy({ $0.0 == "vapid" })
        else {
            return .failure(.init(.badSubscribeRequest, #"the body must be {"vapid": "<applicationServerKey>"} or empty"#))
        }
        guard let text = options["vapid"] else { return .success(nil) }
        guard let value = text.stringValue, let bytes = StrictBase64URL.decode(value), bytes.count == 65, bytes.first == 0x04 else {
            return .failure(.init(.badSubscribeRequest, "vapid must be an uncompressed P-256 public key in base64url"))
        }
        return .success(bytes)
    }

    /// The origin a request to this listener was sent to (`https://` and its `Host`), or ``defaultOrigin()``: the
    /// origin of what it mints.
    func origin(of request: RequestValidator.Head) -> String {
        request.authority.map { "https://" + Self.origin(authority: $0) } ?? defaultOrigin()
    }

    /// `POST /subscribe`: a new subscription on the origin the request was sent to.
    private func subscribe(_ request: RequestValidator.Head, body: [UInt8]) -> Response {
        guard request.method == "POST" else {
            return reject(.init(.methodNotAllowed, "/subscribe takes POST, not \(request.method ?? "nothing")"))
        }
        let key: [UInt8]?
        switch Self.applicationServerKey(options: body) {
        case .failure(let rejection): return reject(rejection)
        case .success(let bytes): key = bytes
        }
        let origin = origin(of: request)
        let subscription = subscriptions.mint(origin: origin, applicationServerKey: key)
        recorder.answered(status: 201, reasonText: nil)
        let json = Array(subscription.json.utf8)
        return Response(status: 201, headers: [
            ("location", origin + "/subscription/" + subscription.id),
            ("link", "<\(subscription.endpoint)>; rel=\"urn:ietf:params:push\""),
            ("content-type", "application/json"), ("content-length", String(json.count)),
        ], body: json)
    }

    /// `DELETE /subscription/<id>`: the subscription expires.
    private func unsubscribe(_ request: RequestValidator.Head, id: String) -> Response {
        guard request.method == "DELETE" else {
            return reject(.init(.methodNotAllowed, "a subscription resource takes DELETE, not \(request.method ?? "nothing")"))
        }
        guard subscriptions.expire(id) else { return reject(.init(.notFound, "no push subscription \(id)")) }
        recorder.answered(status: 204, reasonText: nil)
        return Response(status: 204)
    }

    /// `host:port` as a URL writes it: the default port 443 left out.
    static func origin(authority: String) -> String {
        authority.hasSuffix(":443") ? String(authority.dropLast(4)) : authority
    }

    /// A refusal, counted: `{"reason", "message"}` with the headers its reason calls for.
    func reject(_ rejection: WebPushRejection, retryAfter: Bool = false) -> Response {
        recorder.answered(status: rejection.reason.status, reasonText: rejection.reason.rawValue)
        let json = Array(
            (#"{"reason":"# + JSONValue.string(rejection.reason.rawValue).encodedString + #","message":"#
                + JSONValue.string(rejection.message).encodedString + "}").utf8)
        var headers = [("content-type", "application/json"), ("content-length", String(json.count))]
        if retryAfter { headers.append(("retry-after", String(Self.retryAfterSeconds))) }
        if rejection.reason == .missingAuthorization { headers.append(("www-authenticate", "vapid")) }
        if rejection.reason == .unsupportedContentEncoding { headers.append(("accept-encoding", "aes128gcm")) }
        return Response(status: rejection.reason.status, headers: headers, body: json)
    }
}
