import PushCore

/// A broadcast channel's configuration as APNs reports it (`GET /1/apps/{bundle-id}/channels`).
public struct ChannelInfo: Sendable, Equatable {
    /// Whether APNs stores the latest message for offline devices.
    public var policy: ChannelStoragePolicy
    /// The channel's push type (`LiveActivity`, the only one Apple offers).
    public var pushType: String

    /// Creates a channel description.
    public init(policy: ChannelStoragePolicy, pushType: String) {
        self.policy = policy
        self.pushType = pushType
    }
}
