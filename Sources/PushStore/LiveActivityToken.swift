import PushCore

/// One registered Live Activity token.
public struct LiveActivityToken: Sendable, Equatable {
    /// The token (hex, canonical): push-to-start and update tokens have the device-token form.
    public var token: DeviceToken
    /// Push-to-start or update.
    public var kind: LiveActivityTokenKind
    /// The APNs environment the token belongs to.
    public var environment: APNsEnvironment
    /// The app installation a push-to-start token belongs to (the app's own id for it, e.g. a vendor id).
    public var installation: String?
    /// The ActivityKit attributes type (`ActivityAttributes` struct name) a push-to-start token starts, or the
    /// type of the activity an update token belongs to, when the app gave it.
    public var attributesType: String?
    /// The activity an update token belongs to.
    public var activityId: String?
    /// The registry channels (audience groups) a push-to-start token is in, sorted.
    public var channels: [String]
    /// First registered (ms since 1970).
    public var createdMs: Int64
    /// Last registered (ms since 1970); gates 410 prunes as for device tokens.
    public var lastRegisteredMs: Int64

    /// Creates a record.
    public init(
        token: DeviceToken, kind: LiveActivityTokenKind, environment: APNsEnvironment, installation: String? = nil,
        attributesType: String? = nil, activityId: String? = nil, channels: [String] = [], createdMs: Int64 = 0,
        lastRegisteredMs: Int64 = 0
    ) {
        self.token = token
        self.kind = kind
        self.environment = environment
        self.installation = installation
        self.attributesType = attributesType
        self.activityId = activityId
        self.channels = channels
        self.createdMs = createdMs
        self.lastRegisteredMs = lastRegisteredMs
    }
}
