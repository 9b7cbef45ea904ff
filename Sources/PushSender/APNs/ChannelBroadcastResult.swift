/// APNs' acceptance of a broadcast (`POST /4/broadcasts/apps/{bundle-id}`).
public struct ChannelBroadcastResult: Sendable, Equatable {
    /// The `apns-request-id` APNs answered with (the one sent).
    public var requestId: String
    /// The `apns-unique-id` (for the Push Notifications Console's delivery log), if APNs sent one.
    public var uniqueId: String?
    /// The HTTP status (200).
    public var status: Int

    /// Creates a result.
    public init(requestId: String, uniqueId: String?, status: Int) {
        self.requestId = requestId
        self.uniqueId = uniqueId
        self.status = status
    }
}
