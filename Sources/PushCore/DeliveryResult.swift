/// The outcome of one notification as the sender decided it, after any retries.
public struct DeliveryResult: Sendable, Equatable {
    /// What happened.
    public enum Kind: String, Sendable, Equatable {
        /// The push service took it (APNs' 200, a Web Push service's 201, FCM's 200). Final.
        case accepted
        /// The device is gone (APNs' 410 Unregistered or 400 BadDeviceToken, a Web Push service's 404/410, FCM's
        /// UNREGISTERED): pruned by the breaker's decision. Final.
        case tokenDead
        /// A permanent refusal (BadTopic, PayloadTooLarge, a 413, INVALID_ARGUMENT, …): never retried. Final.
        case rejected
        /// Transient failures exhausted the attempts (the service answered 429/5xx the sender's attempt limit of
        /// times, or the connection dropped ``SenderConfiguration/maxDroppedAttempts`` times). Not final: a
        /// later run retries it.
        case deferred
        /// Not sent, or sent without an answer, because the endpoint stopped (``DeliveryResult/stop`` says
        /// why: refused credentials, the service unreachable past the outage limit) or the run is stopping. Not final.
        case unsent
    }

    /// The device.
    public var token: DeviceToken
    /// The `apns-id` (the same on every attempt).
    public var notificationId: String
    /// `apns-unique-id` from APNs (development environment only); nil for the other services.
    public var uniqueId: String?
    /// The last HTTP status, 0 when no answer arrived.
    public var status: Int
    /// The service's reason for an answer that was not accepted (APNs' reason, or the Web Push or FCM reason the
    /// sender names).
    public var reason: APNsReason?
    /// The outcome.
    public var kind: Kind
    /// What the pruning policy decided for a dead token.
    public var prune: PruneDecision
    /// True once the store removed the token (set by whoever commits the result; the sender never does).
    public var pruned: Bool
    /// Requests the service answered for this notification (dropped connections are not counted).
    public var attempts: Int
    /// True when an attempt may have reached the service without an answer (sent, then the connection died), so
    /// the device may see it twice.
    public var possiblyDuplicated: Bool
    /// The `timestamp` of a 410 answer (ms since epoch).
    public var apnsTimestampMs: Int64?
    /// When the first attempt started (ms since epoch).
    public var startedAtMs: Int64
    /// When the outcome was decided (ms since epoch).
    public var finishedAtMs: Int64
    /// The transport error of the last attempt, when there was no HTTP answer.
    public var error: String?
    /// For ``Kind/unsent``: why the endpoint stopped.
    public var stop: EndpointStop?
    /// The push service the device belongs to (the web push sender and the router's refusals set it), so the
    /// history and the webhook say which service answered.
    public var service: PushService = .apns

    /// Creates a result.
    public init(
        token: DeviceToken, notificationId: String, uniqueId: String? = nil, status: Int, reason: APNsReason? = nil,
        kind: Kind, prune: PruneDecision = .none, pruned: Bool = false, attempts: Int, possiblyDuplicated: Bool = false,
        apnsTimestampMs: Int64? = nil, startedAtMs: Int64, finishedAtMs: Int64, error: String? = nil,
        stop: EndpointStop? = nil, service: PushService = .apns
    ) {
        self.token = token
        self.notificationId = notificationId
        self.uniqueId = uniqueId
        self.status = status
        self.reason = reason
        self.kind = kind
        self.prune = prune
        self.pruned = pruned
        self.attempts = attempts
        self.possiblyDuplicated = possiblyDuplicated
        self.apnsTimestampMs = apnsTimestampMs
        self.startedAtMs = startedAtMs
        self.finishedAtMs = finishedAtMs
        self.error = error
        self.stop = stop
        self.service = service
    }

    /// True for a 200.
    public var isAccepted: Bool { kind == .accepted }
    /// True for accepted, dead-token and rejected outcomes: nothing is left to try.
    public var isFinal: Bool { kind == .accepted || kind == .tokenDead || kind == .rejected }
}

/// The pruning policy's decision for one answer (the sender's breaker decides; the store applies).
public enum PruneDecision: Sendable, Equatable {
    /// Nothing to remove.
    case none
    /// Remove the token (a 410 only if it was not registered again after `apnsTimestampMs`).
    case delete(PruneRequest)
    /// BadDeviceToken while the endpoint has not yet proven healthy: the prune is applied only if the breaker
    /// becomes confident during this run (the sender then reports it through the submit's `onPruneReleased`),
    /// else discarded.
    case held
    /// BadDeviceToken while the pruning breaker is tripped: the token is kept.
    case keptByBreaker

    /// The decision for the breaker's `prune` of a token-dead answer whose prune would be `request`.
    public init(_ prune: PruningBreaker.Prune, _ request: PruneRequest) {
        switch prune {
        case .delete: self = .delete(request)
        case .held: self = .held
        case .keptByBreaker: self = .keptByBreaker
        }
    }
}
