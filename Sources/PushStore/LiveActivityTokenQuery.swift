import PushCore

/// Which Live Activity tokens of an app to read: one kind, optionally narrowed.
public struct LiveActivityTokenQuery: Sendable, Equatable {
    /// The app id.
    public var app: String
    /// Push-to-start or update tokens.
    public var kind: LiveActivityTokenKind
    /// Only this attributes type.
    public var attributesType: String?
    /// Only this activity's tokens (update tokens).
    public var activityId: String?
    /// Only push-to-start tokens in this registry channel.
    public var channel: String?
    /// Only this installation's tokens.
    public var installation: String?
    /// Only tokens of this environment.
    public var environment: APNsEnvironment?

    /// Creates a query.
    public init(
        app: String, kind: LiveActivityTokenKind, attributesType: String? = nil, activityId: String? = nil,
        channel: String? = nil, installation: String? = nil, environment: APNsEnvironment? = nil
    ) {
        self.app = app
        self.kind = kind
        self.attributesType = attributesType
        self.activityId = activityId
        self.channel = channel
        self.installation = installation
        self.environment = environment
    }
}
