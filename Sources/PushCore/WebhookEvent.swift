/// Something the app's backend should hear about, kept in the store's outbox (written in the same transaction
/// as the outcome that caused it) until its webhook has taken it.
public struct WebhookEvent: Sendable, Equatable {
    /// What happened.
    public enum Kind: String, Sendable, CaseIterable {
        /// APNs said the token is dead (410 Unregistered/ExpiredToken, 400 BadDeviceToken, …) and the registry
        /// removed it.
        case tokenPruned
        /// APNs refused the notification for good (400/403/413 other than a dead token): it was not delivered.
        case deliveryFailed
    }

    /// The outbox row id (increasing): the receiver's de-duplication key together with the app.
    public var id: Int64
    /// The app.
    public var app: String
    /// What happened.
    public var kind: Kind
    /// The device token (lowercase hex).
    public var token: String
    /// APNs' HTTP status (0 when the prune was released by the pruning breaker and has none of its own).
    public var status: Int
    /// APNs' reason.
    public var reason: String?
    /// The notification's `apns-id`.
    public var notificationId: String?
    /// The broadcast or send job, if any.
    public var broadcastId: String?
    /// APNs' `timestamp` for Unregistered/ExpiredToken (ms since 1970): when the token stopped being valid.
    public var apnsTimestampMs: Int64?
    /// When it was recorded (ms since 1970, the store's clock).
    public var createdMs: Int64
    /// Delivery attempts so far.
    public var attempts: Int
    /// The push service the device belonged to (events recorded before the service was kept read as apns).
    public var service: PushService

    /// Creates an event.
    public init(
        id: Int64 = 0, app: String, kind: Kind, token: String, status: Int, reason: String?, notificationId: String?,
        broadcastId: String?, apnsTimestampMs: Int64?, createdMs: Int64 = 0, attempts: Int = 0,
        service: PushService = .apns
    ) {
        self.id = id
        self.app = app
        self.kind = kind
        self.token = token
        self.status = status
        self.reason = reason
        self.notificationId = notificationId
        self.broadcastId = broadcastId
        self.apnsTimestampMs = apnsTimestampMs
        self.createdMs = createdMs
        self.attempts = attempts
        self.service = service
    }

    /// The event as the webhook's JSON carries it.
    public var json: JSONValue {
        var fields: [(String, JSONValue)] = [
            ("id", .int(id)), ("type", .string(kind.rawValue)), ("token", .string(token)), ("status", .int(Int64(status))),
            ("service", .string(service.rawValue)),
        ]
        if let reason { fields.append(("reason", .string(reason))) }
        if let apnsTimestampMs { fields.append(("apnsTimestamp", .string(Timestamp.rfc3339(ms: apnsTimestampMs)))) }
        if let notificationId {
            fields.append(("notificationId", .string(notificationId)))
            // Its first name, for receivers written before Web Push and FCM (deprecated: docs/operating.md).
            fields.append(("apnsId", .string(notificationId)))
        }
        if let broadcastId { fields.append(("broadcast", .string(broadcastId))) }
        fields.append(("time", .string(Timestamp.rfc3339(ms: createdMs))))
        return .object(fields)
    }
}
