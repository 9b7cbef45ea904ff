/// Request options that go into APNs headers, as a caller gives them (all optional).
public struct NotificationOptions: Sendable, Equatable {
    /// `apns-push-type`; derived from the payload when nil.
    public var pushType: PushType?
    /// `apns-priority`; 5 for background pushes and 10 otherwise when nil.
    public var priority: PushPriority?
    /// `apns-expiration` in epoch seconds; 0 means deliver once. Nil omits the header.
    public var expiration: Int64?
    /// `apns-collapse-id` (≤ 64 bytes UTF-8).
    public var collapseId: String?
    /// A fixed `apns-id` (UUID); a new one per device when nil.
    public var notificationId: String?
    /// A byte limit below Apple's (the app's `payloadLimit`, or `--limit`).
    public var limit: Int?
    /// Shorten an oversized alert body instead of failing. Default true.
    public var allowTruncation: Bool

    /// Creates options; every field defaults to "derive it".
    public init(
        pushType: PushType? = nil, priority: PushPriority? = nil, expiration: Int64? = nil,
        collapseId: String? = nil, notificationId: String? = nil, limit: Int? = nil, allowTruncation: Bool = true
    ) {
        self.pushType = pushType
        self.priority = priority
        self.expiration = expiration
        self.collapseId = collapseId
        self.notificationId = notificationId
        self.limit = limit
        self.allowTruncation = allowTruncation
    }
}

/// A validated, encoded payload with its derived headers: the part of a request shared by every device.
public struct PreparedNotification: Sendable, Equatable {
    /// The compact JSON bytes to send.
    public var payload: [UInt8]
    /// The push type (given or derived).
    public var pushType: PushType
    /// The priority (given or derived).
    public var priority: PushPriority
    /// `apns-expiration`, if any.
    public var expiration: Int64?
    /// `apns-collapse-id`, if any.
    public var collapseId: String?
    /// A fixed `apns-id`, if the caller gave one.
    public var notificationId: String?
    /// The byte limit that applied.
    public var limit: Int
    /// True when the alert text was shortened to fit.
    public var truncated: Bool

    /// The `apns-topic` for an app's bundle id: the suffix the push type needs is appended once.
    public func topic(for bundleId: String) -> String { pushType.topic(bundleId: bundleId) }

    /// The request for one device.
    public func request(token: DeviceToken, bundleId: String, notificationId: String? = nil) -> NotificationRequest {
        NotificationRequest(
            token: token, topic: topic(for: bundleId), pushType: pushType, priority: priority,
            expiration: expiration, collapseId: collapseId,
            notificationId: notificationId ?? self.notificationId ?? NotificationID.random(), payload: payload)
    }

    /// The payload as text.
    public var payloadString: String { String(decoding: payload, as: UTF8.self) }
}
