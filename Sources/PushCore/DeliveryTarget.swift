/// One device a broadcast pass sends to.
public struct DeliveryTarget: Sendable, Equatable {
    /// The device.
    public var token: DeviceToken
    /// The environment it registered in (routes to Apple's production or sandbox host), when known.
    public var environment: APNsEnvironment?

    /// Creates a target.
    public init(token: DeviceToken, environment: APNsEnvironment?) {
        self.token = token
        self.environment = environment
    }
}

/// Which devices a run's pass goes through.
public enum DeliveryPass: String, Sendable, Equatable {
    /// Every targeted device from the checkpoint on, in token order.
    case main
    /// Devices deferred by earlier runs, in token order.
    case retry
}
