import PushCore

/// Prunes counted by app, reason and what was done (`deleted` or `skipped`).
public struct PruneCount: Sendable, Equatable {
    /// The app id.
    public var app: String
    /// The push service of the pruned device; nil for what was counted before the counters knew services (see
    /// ``DeliveryCount/service``).
    public var service: PushService?
    /// Apple's reason.
    public var reason: String
    /// `deleted`, or `skipped` because the device registered again after APNs' timestamp.
    public var outcome: String
    /// How many.
    public var count: Int
}
