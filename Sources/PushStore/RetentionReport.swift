/// What one retention pass deleted (see ``RegistryStore/trimHistory(before:batchSize:)``).
public struct RetentionReport: Sendable, Equatable {
    /// History older than this was deleted (ms since 1970).
    public var cutoffMs: Int64
    /// Delivery-log rows deleted.
    public var deliveries = 0
    /// Prune-log rows deleted.
    public var prunes = 0
    /// Per-device outcome rows of completed broadcasts and send jobs deleted.
    public var outcomes = 0
    /// Explicit-token rows (`{"tokens": […]}` send jobs) of completed jobs deleted.
    public var jobTokens = 0
    /// Completed broadcasts and send jobs whose per-device rows were deleted in this pass.
    public var broadcasts = 0

    /// Creates a report.
    public init(cutoffMs: Int64, deliveries: Int = 0, prunes: Int = 0, outcomes: Int = 0, jobTokens: Int = 0, broadcasts: Int = 0) {
        self.cutoffMs = cutoffMs
        self.deliveries = deliveries
        self.prunes = prunes
        self.outcomes = outcomes
        self.jobTokens = jobTokens
        self.broadcasts = broadcasts
    }

    /// Rows deleted in all.
    public var total: Int { deliveries + prunes + outcomes + jobTokens }
}
