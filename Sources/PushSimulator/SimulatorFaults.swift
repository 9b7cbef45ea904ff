/// Failures the simulator injects, as APNs has been seen to produce them. Every field defaults to "off".
///
/// Counts are per connection, so a client that reconnects meets the same fault again (as it would meet
/// APNs' periodic GOAWAYs). Fractions are probabilities in 0…1 drawn per request.
public struct SimulatorFaults: Sendable, Equatable {
    /// How the simulator answers a stream a client opens over the connection's stream limit
    /// (SETTINGS_MAX_CONCURRENT_STREAMS): RFC 9113 §5.1.2 makes it a stream error, PROTOCOL_ERROR or REFUSED_STREAM,
    /// and some servers close the connection instead. Whatever the answer, the limit is enforced from the connection's
    /// first stream (the advertised initial limit: the strictest servers, Python's `h2`, do so before the client could
    /// have read it) and a changed one from the moment the client acknowledged the SETTINGS that carried it (§6.5.3).
    public enum ExcessStreamAnswer: String, Sendable, Equatable, CaseIterable {
        /// RST_STREAM REFUSED_STREAM: the request was not processed, the client may send it again (§8.7).
        case refuse
        /// RST_STREAM PROTOCOL_ERROR: a stream error that does not say whether the request was processed.
        case protocolError = "protocol-error"
        /// GOAWAY PROTOCOL_ERROR (last-stream-id: the last stream accepted), then the connection closes with every
        /// stream on it unanswered — what Python's `h2` and the servers built on it do.
        case closeConnection = "close"
    }

    /// A stream limit lowered (or raised) mid-connection and then restored, per connection.
    public struct StreamLimitChange: Sendable, Equatable {
        /// When the connection's stream number `afterStreams` is opened, SETTINGS advertises `limit`.
        public var afterStreams: Int
        /// The limit advertised meanwhile.
        public var limit: Int
        /// After this many more streams, SETTINGS advertises the configured limit again.
        public var forStreams: Int

        /// Creates a change (every count at least 1).
        public init(afterStreams: Int, limit: Int, forStreams: Int) {
            self.afterStreams = max(1, afterStreams)
            self.limit = max(1, limit)
            self.forStreams = max(1, forStreams)
        }
    }

    /// Answers released at this rate (answers per second, over every connection of the simulator), each on its own:
    /// written and flushed alone, as a server that is the bottleneck answers — one by one, spread out, the way real
    /// push services answer a sender with a thousand requests in flight (50–150 ms each, from many origins). A fast
    /// simulator answers in bursts of dozens per write, which hides what each answer costs the client when answers
    /// trickle in (issue 57). A request waits in line from when its last byte arrived; the waiting ones still count
    /// against the stream limit. HTTP/2 only. Nil (the default): every answer as soon as it is ready.
    public var answersPerSecond: Double?
    /// Share of Huawei Push Kit sends answered HTTP 503, Huawei's "Traffic control" (after the access token is
    /// checked, before the body). Default 0.
    public var hmsFlowControlFraction: Double = 0
    /// How a stream over the stream limit is answered. Default ``ExcessStreamAnswer/refuse``.
    public var excessStream: ExcessStreamAnswer = .refuse
    /// Lowers (or raises) the stream limit mid-connection, then restores it. Default nil (the configured limit
    /// throughout).
    public var streamLimitChange: StreamLimitChange?
    /// The first this many streams of a connection are answered without ``responseDelay`` (a connection that
    /// answered, then lost its link). Default 0.
    public var undelayedStreams = 0
    /// After this many streams on a connection, send GOAWAY (NO_ERROR, debug data `{"reason":"Shutdown"}`)
    /// whose last-stream-id is that stream; later streams are ignored and the connection closes once the
    /// streams up to it are answered.
    public var goAwayAfterStreams: Int?
    /// After a rejected notification (any non-200 answer) advertise SETTINGS_MAX_CONCURRENT_STREAMS = 1 and
    /// answer streams beyond that limit with RST_STREAM REFUSED_STREAM; the next 200 restores the limit.
    public var dropStreamLimitAfterRejection: Bool
    /// When the stream after this many is opened on a connection, reset the TCP connection (RST, no GOAWAY).
    public var resetAfterRequests: Int?
    /// Delay before answering (applies to ``delayFraction`` of requests). Default zero.
    public var responseDelay: Duration
    /// Share of requests that get ``responseDelay``. Default 1 (all of them, when a delay is set).
    public var delayFraction: Double
    /// Share of requests answered 429 TooManyRequests.
    public var tooManyRequestsFraction: Double
    /// Share of requests answered 503 ServiceUnavailable.
    public var serviceUnavailableFraction: Double
    /// Share of requests answered 500 InternalServerError.
    public var internalServerErrorFraction: Double
    /// Share of channel-management and channel-broadcast requests answered 502 with no body, as a load balancer in
    /// front of Apple's hosts answers when the host behind it fails: a status APNs itself never sends, so none of its
    /// reasons. (A device send gets any status from a scripted device:
    /// ``DeviceBehaviour/answer(status:reason:timestampMs:)``.)
    public var badGatewayFraction: Double
    /// The `Retry-After` header sent, verbatim, with every 429 and 503 answer (the fractions above and devices
    /// scripted to answer so): delay-seconds (`"2"`), an HTTP-date, or a malformed value to test that a client
    /// ignores it. Nil (the default): none, as APNs usually answers.
    public var retryAfter: String?
    /// Accept TCP connections but never answer the TLS handshake (applies to new connections).
    public var blackHole: Bool
    /// Reset (TCP RST) the TLS handshake of this many new connections, counted from the start: the
    /// connection is accepted, the ClientHello read, then the connection is reset — a load balancer or APNs
    /// front end dropping connections. Later connections are served normally. Default 0.
    public var resetHandshakes: Int

    /// Creates a fault set; the defaults inject nothing.
    public init(
        goAwayAfterStreams: Int? = nil, dropStreamLimitAfterRejection: Bool = false,
        resetAfterRequests: Int? = nil, responseDelay: Duration = .zero, delayFraction: Double = 1,
        tooManyRequestsFraction: Double = 0, serviceUnavailableFraction: Double = 0,
        internalServerErrorFraction: Double = 0, badGatewayFraction: Double = 0, retryAfter: String? = nil,
        blackHole: Bool = false, resetHandshakes: Int = 0
    ) {
        self.retryAfter = retryAfter
        self.resetHandshakes = max(0, resetHandshakes)
        self.goAwayAfterStreams = goAwayAfterStreams
        self.dropStreamLimitAfterRejection = dropStreamLimitAfterRejection
        self.resetAfterRequests = resetAfterRequests
        self.responseDelay = responseDelay
        self.delayFraction = delayFraction
        self.tooManyRequestsFraction = tooManyRequestsFraction
        self.serviceUnavailableFraction = serviceUnavailableFraction
        self.internalServerErrorFraction = internalServerErrorFraction
        self.badGatewayFraction = badGatewayFraction
        self.blackHole = blackHole
    }

    /// Creates a fault set with the excess-stream answer and a stream-limit change (the other faults off).
    public init(excessStream: ExcessStreamAnswer, streamLimitChange: StreamLimitChange? = nil) {
        self.init()
        self.excessStream = excessStream
        self.streamLimitChange = streamLimitChange
    }

    /// True when the answer to a connection's request number `request` (from 1) is to wait ``responseDelay``: never
    /// for the first ``undelayedStreams``, else drawn by `chance` at ``delayFraction``.
    func delays(request: Int, chance: (Double) -> Bool) -> Bool {
        responseDelay > .zero && request > undelayedStreams && chance(delayFraction)
    }

    /// True when no fault is active (the fast path skips all fault checks).
    public var isEmpty: Bool { self == SimulatorFaults() }
}
