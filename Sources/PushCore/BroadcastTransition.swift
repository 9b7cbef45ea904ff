/// What happens to a broadcast, and to the shard a claim ends, on each event of its life — decided once for both
/// backends, as ``BroadcastStart`` (in PushStore) decides starting. Each backend loads what the event needs (the
/// broadcast row, how many shards are left, whether a lease is live), asks ``BroadcastRecord/after(_:now:)``, and
/// stores the result in its own SQL and under its own locks (SQLite: one writer; PostgreSQL: the broadcast row
/// `FOR UPDATE` after the shard's fenced write, so the last of concurrent finishers sees every other shard done).
///
/// ```
///   pending ──claim/resume──▶ running ◀──claim/resume── interrupted (and legacy failed)
///      │                        │  └── last worker gives its shard back / stop with no live lease ──▶ interrupted
///      │                        └── last shard finished ──▶ completed (total = devices with an outcome)
///      └──── cancel (from any unfinished state) ──▶ cancelled          (completed and cancelled never change here;
///                                                                       a new round of a completed one is BroadcastStart's)
/// ```
public enum BroadcastEvent: Sendable, Equatable {
    /// A worker claimed one of its shards.
    case claim
    /// Started again by hand or by the server (``BroadcastStart``'s resume).
    case resume
    /// A claim ended as `end` (after its shard's own write): `shardsLeft` of the broadcast's shards are not done, and
    /// `liveLease` says whether a claim on one of them is still live (``ShardLease/isLive(expiresMs:now:)``).
    case shardEnded(ShardEnd, shardsLeft: Int, liveLease: Bool)
    /// A run stopped early for `error` (``DeliveryStore/noteStopped(id:error:)``); `liveLease` as above.
    case stopped(error: String, liveLease: Bool)
    /// Cancelled (`DELETE` on the job, `pushctl jobs cancel`).
    case cancel
}

/// The broadcast row an event leaves: what a backend writes.
public struct BroadcastChange: Sendable, Equatable {
    /// The new state.
    public var state: BroadcastState
    /// The new error (nil clears it).
    public var error: String?
    /// Last changed.
    public var updatedMs: Int64
    /// Completed or cancelled at.
    public var finishedMs: Int64?
    /// True when this event completes the broadcast: its total becomes ``total(from:)`` of its counters, read in the
    /// same transaction.
    public var completes: Bool

    /// Creates a change.
    public init(state: BroadcastState, error: String?, updatedMs: Int64, finishedMs: Int64?, completes: Bool) {
        self.state = state
        self.error = error
        self.updatedMs = updatedMs
        self.finishedMs = finishedMs
        self.completes = completes
    }

    /// A completed broadcast's total: the devices with a committed outcome, final or deferred
    /// (``BroadcastCounts/done``) — the one rule both backends store.
    public static func total(from counts: BroadcastCounts) -> Int { counts.done }
}

extension BroadcastRecord {
    /// The row `event` leaves at `now`, or nil when it changes nothing (nothing to write).
    public func after(_ event: BroadcastEvent, now: Int64) -> BroadcastChange? {
        switch event {
        case .claim, .resume:
            guard BroadcastState.resumable.contains(state) else { return nil }
            return BroadcastChange(state: .running, error: error, updatedMs: now, finishedMs: finishedMs, completes: false)
        case .cancel:
            guard state.isUnfinished else { return nil }
            return BroadcastChange(state: .cancelled, error: error, updatedMs: now, finishedMs: now, completes: false)
        case .stopped(let why, let liveLease):
            // The reason is kept whatever the state (it says why the last run stopped); only a running one with no
            // live lease left becomes interrupted.
            let next: BroadcastState = state.isUnfinished && !liveLease ? .interrupted : state
            return BroadcastChange(state: next, error: why, updatedMs: now, finishedMs: finishedMs, completes: false)
        case .shardEnded(let end, let shardsLeft, let liveLease):
            var change = BroadcastChange(state: state, error: error, updatedMs: now, finishedMs: finishedMs, completes: false)
            if case .released(let why?, _, _, _) = end { change.error = why }
            if state == .cancelled { return change }
            if shardsLeft == 0 {
                change.state = .completed
                if finishedMs == nil {
                    change.completes = true
                    change.finishedMs = now
                    change.error = nil
                }
            } else if case .released = end, !liveLease {
                change.state = .interrupted
            }
            return change
        }
    }
}

extension BroadcastShard.State {
    /// The state a claim's end leaves its shard in: done when every device has an outcome, pending (claimable
    /// again) when given back.
    public static func after(_ end: ShardEnd) -> BroadcastShard.State {
        switch end {
        case .finished: .done
        case .released: .pending
        }
    }
}

extension BroadcastState {
    /// The states `event` moves out of (for events whose result does not depend on what else the store holds):
    /// what a conditional `UPDATE … WHERE state IN (…)` names, so a backend that cannot afford to lock the broadcast
    /// row (a claim on PostgreSQL must never wait on other hosts' claims) stores the same transition.
    public static func changed(by event: BroadcastEvent) -> [BroadcastState] {
        allCases.filter { state in
            let record = BroadcastRecord(id: "", app: "", state: state, payload: [], pushType: .alert, priority: .immediate)
            return record.after(event, now: 0).map { $0.state != state } ?? false
        }
    }
}
