/// Where a broadcast or send job is in its life.
public enum BroadcastState: String, Sendable, CaseIterable {
    /// Accepted (e.g. by the HTTP API) but not started.
    case pending
    /// Started and split into shards, which workers claim and send.
    case running
    /// Stopped before every device had an outcome, with no live worker left on it: a signal, a crash, APNs
    /// unreachable longer than the outage limit, refused credentials or an unavailable database. The same id
    /// (or any worker) resumes it.
    case interrupted
    /// Cancelled (`DELETE` on the job, `pushctl jobs cancel`): never started, or stopped where it was; devices
    /// without an outcome are not sent to, and nothing resumes it.
    case cancelled
    /// Every targeted device has a committed outcome (final, or deferred: retried by the next run of the
    /// same id).
    case completed
    /// Written by versions before 2026-11 for runs that stopped on refused credentials; treated like
    /// ``interrupted`` (a run of the same id resumes it). Never written now.
    case failed

    /// True when a run of this id still has devices to send to (deferred ones aside).
    public var isUnfinished: Bool { self != .completed && self != .cancelled }
}
