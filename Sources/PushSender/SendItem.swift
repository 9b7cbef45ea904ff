import PushCore

/// One notification to send, with the environment its token was registered in (used to route to Apple's
/// production or sandbox host; ignored for the simulator and URL endpoints).
public struct SendItem: Sendable {
    /// The notification.
    public var request: NotificationRequest
    /// The token's registered environment, when known.
    public var environment: APNsEnvironment?

    /// Creates an item.
    public init(_ request: NotificationRequest, environment: APNsEnvironment? = nil) {
        self.request = request
        self.environment = environment
    }
}
