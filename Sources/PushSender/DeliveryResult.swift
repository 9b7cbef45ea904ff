import PushCore

/// The final outcome of one notification, after any retries.
public struct DeliveryResult: Sendable, Equatable {
    /// What happened, in the terms the CLI and the delivery log use.
    public enum Kind: String, Sendable, Equatable {
        /// 200 from APNs.
        case accepted
        /// 410 Unregistered/ExpiredToken or 400 BadDeviceToken/DeviceTokenNotForTopic: the token is dead.
        case tokenDead
        /// A permanent 4xx (BadTopic, PayloadTooLarge, …): never retried.
        case rejected
        /// Retries exhausted (429/5xx/timeouts/resets), or a transport failure.
        case failed
        /// The endpoint refused our credentials; the endpoint was stopped.
        case credentialFailure
        /// Never sent: the endpoint had been stopped (credentials, TLS) or the certificate is expired.
        case notSent
    }

    /// The device.
    public var token: DeviceToken
    /// The `apns-id` (the same on every attempt).
    public var apnsId: String
    /// `apns-unique-id` from APNs (development environment only).
    public var uniqueId: String?
    /// The last HTTP status, 0 when no answer arrived.
    public var status: Int
    /// APNs' reason for a non-200 answer.
    public var reason: APNsReason?
    /// The outcome.
    public var kind: Kind
    /// True when the token was removed from the registry (or handed to the sink for removal).
    public var pruned: Bool
    /// Requests made for this notification.
    public var attempts: Int
    /// True when an earlier attempt may have reached the device (sent, then the connection died unanswered).
    public var possiblyDuplicated: Bool
    /// The `timestamp` of a 410 answer (ms since epoch): prune only tokens registered before it.
    public var apnsTimestampMs: Int64?
    /// When the first attempt started (ms since epoch).
    public var startedAtMs: Int64
    /// When the final outcome arrived (ms since epoch).
    public var finishedAtMs: Int64
    /// A transport or endpoint error, when there was no HTTP answer.
    public var error: String?

    /// Creates a result.
    public init(
        token: DeviceToken, apnsId: String, uniqueId: String? = nil, status: Int, reason: APNsReason? = nil,
        kind: Kind, pruned: Bool = false, attempts: Int, possiblyDuplicated: Bool = false,
        apnsTimestampMs: Int64? = nil, startedAtMs: Int64, finishedAtMs: Int64, error: String? = nil
    ) {
        self.token = token
        self.apnsId = apnsId
        self.uniqueId = uniqueId
        self.status = status
        self.reason = reason
        self.kind = kind
        self.pruned = pruned
        self.attempts = attempts
        self.possiblyDuplicated = possiblyDuplicated
        self.apnsTimestampMs = apnsTimestampMs
        self.startedAtMs = startedAtMs
        self.finishedAtMs = finishedAtMs
        self.error = error
    }

    /// True for a 200.
    public var isAccepted: Bool { kind == .accepted }
}

/// One notification for the batch API, with the environment its token was registered in (used to route
/// to Apple's production or sandbox host; ignored for the simulator and URL endpoints).
public struct SendItem: Sendable {
    /// The notification.
    public var request: NotificationRequest
    /// The token's registered environment, when known.
    public var environment: APNsEnvironment?

    /// Creates an item.
    public init(_ request: NotificationRequest, environment: APNsEnvironment? = nil) {
        self.request = request
        self.environment = environment
    }
}

/// Where final outcomes and prunes go (the PushStore registry in production). Called off the send path,
/// from one background queue, with batches.
public protocol DeliverySink: Sendable {
    /// Stores a batch of final outcomes (one transaction).
    func record(_ results: [DeliveryResult]) throws
    /// Removes a dead token; a 410 passes its timestamp so a token re-registered after it is kept.
    /// Returns true when a registration was removed.
    func prune(token: DeviceToken, reason: APNsReason, apnsTimestampMs: Int64?) throws -> Bool
}
