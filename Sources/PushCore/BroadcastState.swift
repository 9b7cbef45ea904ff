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

extension BroadcastState {
    /// The state of a job made of several (a local-time job's waves): cancelled, completed or pending when every
    /// part is; interrupted when any part is (a run resumes it); otherwise running (some waves sent, others waiting).
    public static func aggregate(_ states: [BroadcastState]) -> BroadcastState {
        let normalized = states.map { $0 == .failed ? BroadcastState.interrupted : $0 }
        guard let first = normalized.first else { return .completed }
        if normalized.allSatisfy({ $0 == first }) { return first }
        if normalized.contains(.interrupted) { return .interrupted }
        let live = normalized.filter { $0 != .cancelled }
        if let one = live.first, live.allSatisfy({ $0 == one }) { return one }
        return .running
    }
}
