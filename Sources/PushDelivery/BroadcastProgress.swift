import PushCore
import Synchronization

/// Live counts while a run goes on (committed outcomes of this run; totals come from the store).
public struct BroadcastProgress: Sendable {
    /// Outcomes committed in this run.
    public var done = 0
    /// Accepted in this run.
    public var accepted = 0
    /// Not accepted in this run (dead, rejected, deferred).
    public var failed = 0
    /// Pruned by the store in this run.
    public var pruned = 0
    /// Devices with an outcome before this run (resume).
    public var doneBefore = 0
    /// Devices targeted.
    public var total = 0
    /// Seconds since this run started.
    public var elapsed: Double = 0
    /// Outcomes other processes (workers, another run of the same id) committed for the broadcast since this
    /// run started.
    public var doneByOthers = 0
    /// While this process has nothing to claim: the processes (`host:pid`) holding the broadcast's other
    /// shards, whom it waits for. Empty while it works on a shard of its own.
    public var waitingFor: [String] = []
    /// Devices of the whole broadcast with an outcome: earlier runs, this process and the others (at most
    /// ``total``).
    public var doneOverall: Int { min(total, doneBefore + done + doneByOthers) }
}

/// Counters updated by the committer and read by the progress reporter.
final class LiveProgress: Sendable {
    private let state: Mutex<BroadcastProgress>

    init(total: Int, doneBefore: Int) {
        var p = BroadcastProgress()
        p.total = total
        p.doneBefore = doneBefore
        state = Mutex(p)
    }

    func add(_ results: [DeliveryResult]) {
        state.withLock { p in
            for r in results where r.kind != .unsent {
                p.done += 1
                if r.kind == .accepted { p.accepted += 1 } else { p.failed += 1 }
                if r.pruned { p.pruned += 1 }
            }
        }
    }

    /// What the other processes did so far, and whom this one waits for (nil: it works on a shard itself).
    func noteOthers(done: Int?, waitingFor: [String]?) {
        state.withLock { p in
            if let done { p.doneByOthers = done }
            if let waitingFor { p.waitingFor = waitingFor }
        }
    }

    var snapshot: BroadcastProgress { state.withLock { $0 } }
}
