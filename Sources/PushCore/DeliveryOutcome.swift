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
    public var notificationId: String
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
        token: DeviceToken, kind: Kind, notificationId: String, uniqueId: String? = nil, status: Int, reason: String? = nil,
        attempts: Int, possiblyDuplicated: Bool = false, prune: PruneRequest? = nil, startedMs: Int64, finishedMs: Int64,
        service: PushService = .apns
    ) {
        self.token = token
        self.kind = kind
        self.notificationId = notificationId
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

/// A device removal the sender's policy decided on, in the service's own words: the store applies it by the verdict
/// it carries (gated on the service's timestamp when the verdict says so) and records the service's own reason —
/// never an APNs reason for a web or Android device. The store refuses one whose verdict does not prune.
public struct PruneRequest: Sendable, Equatable {
    /// The service's own reason: APNs' (`Unregistered`, `ExpiredToken`, `BadDeviceToken`, `DeviceTokenNotForTopic`,
    /// or one this version does not know that came with a 410), a Web Push service's status (`404`, `410`), FCM's
    /// error code (`UNREGISTERED`, `SENDER_ID_MISMATCH`, `INVALID_ARGUMENT`).
    public var reason: String
    /// The answer's HTTP status.
    public var status: Int
    /// The service's evidence of when the device went away: APNs' 410 `timestamp` (ms); a device registered at or
    /// after it is kept. Nil for the services that give none.
    public var apnsTimestampMs: Int64?
    /// The answer's verdict, by the service's rule (``APNsAnswerRule``, ``WebPushAnswerRule``, ``FCMAnswerRule``).
    public var verdict: AnswerVerdict
    /// The prune counters' reason: bounded like `/metrics`' labels (a reason this version does not know counts as
    /// `unknown`; the prune log keeps the reason as the service gave it).
    public var counterReason: String

    /// An APNs removal; `status` defaults to the one Apple pairs with `reason`, and the verdict is
    /// ``APNsAnswerRule``'s.
    public init(reason: APNsReason, status: Int? = nil, apnsTimestampMs: Int64? = nil) {
        self.reason = reason.rawValue
        self.status = status ?? reason.status
        self.apnsTimestampMs = apnsTimestampMs
        verdict = APNsAnswerRule.verdict(status: self.status, reason: reason)
        counterReason = APNsReason.label(status: self.status, reason: reason.rawValue)
    }

    /// A removal by a service that gives no timestamp (Web Push, FCM): its own `reason` as it answered, the status,
    /// and the bounded `counterReason` (default: the reason). The device goes whatever its registration time.
    public init(service reason: String, status: Int, counterReason: String? = nil) {
        self.reason = reason
        self.status = status
        apnsTimestampMs = nil
        verdict = AnswerVerdict(.tokenDead)
        self.counterReason = counterReason ?? reason
    }
}
