/// The notification each device of a broadcast gets, made from what the broadcast's devices share, read out of
/// the record once per pass: reading them from the record for every device copied the whole record (its payload,
/// targeting and strings) three times per device (callgrind).
public struct BroadcastRequests: Sendable {
    private let pushType: PushType
    private let priority: PushPriority
    private let expiration: Int64?
    private let collapseId: String
    private let ids: NotificationID.Derivation
    private let payload: [UInt8]
    private let targeting: JobTargeting?

    /// The requests of `record`'s devices. They carry no `apns-topic`: the engine knows no service, and the APNs
    /// sender gives a request without one its app's bundle id with the push type's suffix.
    public init(_ record: BroadcastRecord) {
        pushType = record.pushType
        priority = record.priority
        expiration = record.expiration
        collapseId = record.effectiveCollapseId
        ids = NotificationID.Derivation(broadcast: record.id)
        payload = record.payload
        targeting = record.targeting
    }

    /// The notification to `token`, a device of locale `locale`: its derived apns-id (the same in every run), and
    /// its locale's variant of the payload (per-locale text), else the broadcast's payload.
    public func request(to token: DeviceToken, locale: String?) -> NotificationRequest {
        NotificationRequest(
            token: token, topic: "", pushType: pushType, priority: priority, expiration: expiration,
            collapseId: collapseId, notificationId: ids.id(for: token), payload: payload(forLocale: locale))
    }

    /// The payload a device of `locale` gets.
    public func payload(forLocale locale: String?) -> [UInt8] {
        guard let targeting else { return payload }
        return targeting.payload(forLocale: locale, fallback: payload)
    }
}
