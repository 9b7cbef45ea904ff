/// Prunes counted by app, reason and what was done (`deleted` or `skipped`).
public struct PruneCount: Sendable, Equatable {
    /// The app id.
    public var app: String
    /// Apple's reason.
    public var reason: String
    /// `deleted`, or `skipped` because the device registered again after APNs' timestamp.
    public var outcome: String
    /// How many.
    public var count: Int
}
