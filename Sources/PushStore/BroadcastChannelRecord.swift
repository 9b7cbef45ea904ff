import PushCore

/// An iOS 18 broadcast channel the app created through Apple's channel management API, as the registry keeps it.
public struct BroadcastChannelRecord: Sendable, Equatable {
    /// The app id.
    public var app: String
    /// The APNs environment the channel lives in (channels are per environment).
    public var environment: APNsEnvironment
    /// Apple's channel id (base64 text), as `apns-channel-id` carries it.
    public var channelId: String
    /// Whether APNs keeps the most recent message for devices that were offline.
    public var storagePolicy: ChannelStoragePolicy
    /// A name for people (`--label`), if given.
    public var label: String?
    /// When it was created (ms since 1970).
    public var createdMs: Int64

    /// Creates a record.
    public init(
        app: String, environment: APNsEnvironment, channelId: String, storagePolicy: ChannelStoragePolicy,
        label: String? = nil, createdMs: Int64 = 0
    ) {
        self.app = app
        self.environment = environment
        self.channelId = channelId
        self.storagePolicy = storagePolicy
        self.label = label
        self.createdMs = createdMs
    }
}
