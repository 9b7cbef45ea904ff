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
    public var isUnfinished: Bool { Self.unfinished.contains(self) }
}

/// The named sets of states, once: the store's SQL names them through `StateSQL.list` (PushStore), never by hand.
extension BroadcastState {
    /// Still to be worked on: pending (scheduled ones too), running, interrupted, and `failed` (what older versions
    /// wrote for interrupted). `unfinishedBroadcasts()`, `/metrics`' job gauges and cancelling use it.
    public static let unfinished: [BroadcastState] = [.pending, .running, .interrupted, .failed]
    /// Over: nothing runs it again but a new round of a completed one (``DeliveryStore/startBroadcast(id:shardSize:newRound:)``).
    /// Only these are finished (`finished_ms`) and trimmed by history retention.
    public static let ended: [BroadcastState] = [.completed, .cancelled]
    /// Whose shards workers claim: running, or interrupted (a claim resumes it).
    public static let workable: [BroadcastState] = [.running, .interrupted]
    /// Those a claim or a resume moves to running (``BroadcastRecord/after(_:now:)``).
    public static let resumable: [BroadcastState] = [.pending, .interrupted, .failed]
}

extension BroadcastState {
    /// The state of a job made of several (a local-time job's waves): cancelled, completed or pending when every
    /// part is; interrupted when any part is (a run resumes it); cancelled when the parts that were not cancelled
    /// all completed (a job cancelled after some waves went out ended cancelled: its other waves were never sent,
    /// and running it again is refused as for any cancelled id, ``RunAgain``); otherwise running (some waves sent,
    /// others waiting).
    public static func aggregate(_ states: [BroadcastState]) -> BroadcastState {
        let normalized = states.map { $0 == .failed ? BroadcastState.interrupted : $0 }
        guard let first = normalized.first else { return .completed }
        if normalized.allSatisfy({ $0 == first }) { return first }
        if normalized.contains(.interrupted) { return .interrupted }
        let live = normalized.filter { $0 != .cancelled }
        if let one = live.first, live.allSatisfy({ $0 == one }) {
            return one == .completed && live.count < normalized.count ? .cancelled : one
        }
        return .running
    }
}
