import PushCore
import PushSender
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

    var snapshot: BroadcastProgress { state.withLock { $0 } }
}
