/// A broadcast's totals, aggregated from its committed outcomes (so they survive resumes and are what the
/// store holds, not what a layer above intended).
public struct BroadcastCounts: Sendable, Equatable {
    /// Devices with a committed outcome: final ones plus deferred ones.
    public var done = 0
    /// 200 from APNs.
    public var accepted = 0
    /// Devices whose transient failures exhausted their attempts; the next run of the same id retries them.
    public var deferred = 0
    /// Tokens the store removed from the registry.
    public var pruned = 0
    /// Notifications that needed more than one request.
    public var retried = 0
    /// Notifications that may have reached the device twice.
    public var possiblyDuplicated = 0
    /// Outcomes other than accepted, by reason (or kind when there is no reason); deferred ones included.
    public var notAcceptedByReason: [String: Int] = [:]

    /// Creates empty counts.
    public init() {}

    /// Outcomes other than accepted.
    public var notAccepted: Int { done - accepted }
}
