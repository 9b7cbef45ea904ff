/// The final result of one notification to one token, written by the sender to the delivery log.
public struct DeliveryRecord: Sendable, Equatable {
    /// The app id.
    public var app: String
    /// The `apns-id` sent (and echoed by APNs).
    public var notificationId: String
    /// APNs' `apns-unique-id` (development environment only), if any.
    public var uniqueId: String?
    /// The token.
    public var token: DeviceToken
    /// The final HTTP status; 0 when no HTTP answer arrived (connection failure, timeout).
    public var status: Int
    /// APNs' reason string for a failure.
    public var reason: String?
    /// How many attempts were made.
    public var attempts: Int
    /// True when an attempt may have reached APNs without an answer, so the device may see it twice.
    public var possiblyDuplicated: Bool
    /// When the first attempt started (ms since 1970).
    public var firstAttemptMs: Int64
    /// When the outcome was final (ms since 1970).
    public var finishedMs: Int64
    /// What the outcome meant for the device (accepted, token dead, rejected, deferred); nil when unknown.
    public var kind: DeliveryOutcome.Kind?
    /// The broadcast or send job the notification belonged to; nil for `pushctl send`.
    public var broadcastId: String?
    /// The push service the device belongs to (rows written before the service was recorded read as apns).
    public var service: PushService

    /// Creates a record.
    public init(
        app: String, notificationId: String, uniqueId: String? = nil, token: DeviceToken, status: Int,
        reason: String? = nil, attempts: Int, possiblyDuplicated: Bool, firstAttemptMs: Int64, finishedMs: Int64,
        kind: DeliveryOutcome.Kind? = nil, broadcastId: String? = nil, service: PushService = .apns
    ) {
        self.app = app
        self.notificationId = notificationId
        self.uniqueId = uniqueId
        self.token = token
        self.status = status
        self.reason = reason
        self.attempts = attempts
        self.possiblyDuplicated = possiblyDuplicated
        self.firstAttemptMs = firstAttemptMs
        self.finishedMs = finishedMs
        self.kind = kind
        self.broadcastId = broadcastId
        self.service = service
    }
}
