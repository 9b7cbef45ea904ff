import PushCore

/// How a run ended.
public struct BroadcastReport: Sendable {
    /// The broadcast after the run.
    public var record: BroadcastRecord
    /// Totals over all runs, as committed in the store.
    public var counts: BroadcastCounts
    /// Why the run stopped early, or nil when it went through every device.
    public var stop: StopReason?
    /// Endpoints whose pruning breaker tripped during this run or was still tripped at its end.
    public var breakerTripped: [String]
    /// BadDeviceToken prunes discarded because the endpoint never proved healthy.
    public var discardedPrunes: Int
    /// Outcomes committed in this run.
    public var sentThisRun: Int
    /// Retries after 429/5xx answers scheduled in this run.
    public var retriedThisRun: Int
    /// Notifications each worker committed for this broadcast over all its runs, by worker id (this process's
    /// is ``BroadcastConfiguration/owner``).
    public var workers: [String: Int] = [:]
    /// Seconds this run took.
    public var seconds: Double

    /// Creates a report; also what `pushctl` prints for a broadcast it finds completed and does not run again.
    public init(
        record: BroadcastRecord, counts: BroadcastCounts, stop: StopReason? = nil, breakerTripped: [String] = [],
        discardedPrunes: Int = 0, sentThisRun: Int = 0, retriedThisRun: Int = 0, workers: [String: Int] = [:], seconds: Double = 0
    ) {
        self.record = record
        self.counts = counts
        self.stop = stop
        self.breakerTripped = breakerTripped
        self.discardedPrunes = discardedPrunes
        self.sentThisRun = sentThisRun
        self.retriedThisRun = retriedThisRun
        self.workers = workers
        self.seconds = seconds
    }

    /// The signal that interrupted the run, or 0.
    public var signal: Int32 {
        if case .signal(let n) = stop { return n }
        return 0
    }
}
