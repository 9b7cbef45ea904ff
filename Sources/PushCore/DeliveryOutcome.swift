/// One device's outcome as the engine commits it: the delivery-log row, the broadcast outcome and any prune
/// in one value.
public struct DeliveryOutcome: Sendable, Equatable {
    /// What the outcome means for the device.
    public enum Kind: String, Sendable, CaseIterable {
        /// 200 from APNs. Final.
        case accepted
        /// The token is dead (``APNsAnswerRule``: 410 with any reason, 400 BadDeviceToken/DeviceTokenNotForTopic). Final.
        case tokenDead
        /// A permanent 4xx (BadTopic, PayloadTooLarge, …). Final.
        case rejected
        /// Transient failures (429, 5xx, dropped connections) exhausted the device's attempts. Not final: the
        /// next run of the same broadcast id retries it.
        case deferred
        /// No final answer yet: the run stopped before one came (refused credentials, APNs unreachable past the
        /// outage limit, a signal), or the device was still waiting (in flight, in a retry's backoff, parked for an
        /// unreachable endpoint) when the checkpoint had to pass it. Kept so the next claim sends it again and
        /// knows whether it may already have reached APNs; not counted as done.
        case pending
    }

    /// The device.
    public var token: DeviceToken
    /// The outcome.
    public var kind: Kind
    /// The `apns-id` sent on every attempt.
    public var apnsId: String
    /// `apns-unique-id` from APNs (development environment only).
    public var uniqueId: String?
    /// The last HTTP status; 0 when no answer arrived.
    public var status: Int
    /// APNs' reason, or the transport or stop reason when there was no answer.
    public var reason: String?
    /// Requests APNs answered for this device (connection failures are not counted).
    public var attempts: Int
    /// An earlier attempt (possibly by an interrupted run) may have reached APNs, so the device may see it twice.
    public var possiblyDuplicated: Bool
    /// The prune the sender's policy asks for, applied by the store in the same transaction.
    public var prune: PruneRequest?
    /// First attempt (ms since 1970).
    public var startedMs: Int64
    /// Final answer (ms since 1970).
    public var finishedMs: Int64
    /// The broadcast may already hold a row for this device (written by an earlier claim, or by this one while
    /// the device waited), which this outcome replaces — or, when accepted, removes. The store looks the row up
    /// only then for an accepted outcome (an accepted device otherwise writes nothing); it always does for the others.
    public var mayHaveRow = false
    /// The push service the device belongs to, recorded on its delivery-log row and its webhook events.
    public var service: PushService = .apns

    /// Creates an outcome.
    public init(
        token: DeviceToken, kind: Kind, apnsId: String, uniqueId: String? = nil, status: Int, reason: String? = nil,
        attempts: Int, possiblyDuplicated: Bool = false, prune: PruneRequest? = nil, startedMs: Int64, finishedMs: Int64,
        service: PushService = .apns
    ) {
        self.token = token
        self.kind = kind
        self.apnsId = apnsId
        self.uniqueId = uniqueId
        self.status = status
        self.reason = reason
        self.attempts = attempts
        self.possiblyDuplicated = possiblyDuplicated
        self.prune = prune
        self.startedMs = startedMs
        self.finishedMs = finishedMs
        self.service = service
    }
}

/// A token removal the sender's policy decided on; the store applies it (gated on the timestamp when
/// ``APNsAnswerRule`` says so) and refuses one the rule says does not prune.
public struct PruneRequest: Sendable, Equatable {
    /// APNs' reason (Unregistered, ExpiredToken, BadDeviceToken, DeviceTokenNotForTopic, or one this version does
    /// not know that came with a 410).
    public var reason: APNsReason
    /// The answer's HTTP status: with an unknown reason it is what decides (410 prunes).
    public var status: Int
    /// The 410 answer's `timestamp` (ms): a token registered at or after it is kept.
    public var apnsTimestampMs: Int64?

    /// Creates a request; `status` defaults to the one Apple pairs with `reason`.
    public init(reason: APNsReason, status: Int? = nil, apnsTimestampMs: Int64? = nil) {
        self.reason = reason
        self.status = status ?? reason.status
        self.apnsTimestampMs = apnsTimestampMs
    }

    /// The rule's verdict for this answer.
    public var verdict: AnswerVerdict { APNsAnswerRule.verdict(status: status, reason: reason) }
}
