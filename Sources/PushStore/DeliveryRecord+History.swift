import PushCore

extension DeliveryRecord {
    /// The delivery-history item of the API and `pushctl deliveries --json`: the full token (the caller owns
    /// the app), `status` (the outcome kind: accepted, tokenDead, rejected, deferred), the service's `reason`, `notificationId` (also as
    /// `apnsId`, its deprecated first name),
    /// the `broadcast` or send job (null for `pushctl send`), `time` (finished, RFC 3339), `httpStatus` (0: no
    /// answer), `attempts` and `service` (apns, webpush; rows logged before it was kept say apns).
    public var historyJSON: JSONValue {
        .object([
            ("token", .string(token.hex)),
            ("status", kind.map { .string($0.rawValue) } ?? .null),
            ("reason", reason.map { .string($0) } ?? .null),
            ("notificationId", .string(notificationId)),
            // The field's first name, kept for clients written before Web Push and FCM (deprecated: docs/deliveries.md).
            ("apnsId", .string(notificationId)),
            ("broadcast", broadcastId.map { .string($0) } ?? .null),
            ("time", .string(Timestamp.rfc3339(ms: finishedMs, milliseconds: true))),
            ("httpStatus", .int(Int64(status))),
            ("attempts", .int(Int64(attempts))),
            ("service", .string(service.rawValue)),
        ])
    }
}
