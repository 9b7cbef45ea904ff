import PushCore
import Synchronization

/// Why a run stops before it has gone through every device. The first reason raised wins.
public enum StopReason: Sendable, Equatable, CustomStringConvertible {
    /// SIGINT or SIGTERM (or the server shutting down): drain, checkpoint, resume later.
    case signal(Int32)
    /// This claim may not write any more: another worker took the shard over (its claim expired), or the job was
    /// cancelled.
    case leaseLost(String)
    /// An endpoint stopped: refused credentials, or APNs unreachable past the outage limit.
    case endpoint(EndpointStop)
    /// The database stayed unavailable past its outage limit.
    case store(String)

    /// One line.
    public var description: String {
        switch self {
        case .signal(let number): "interrupted by signal \(number)"
        case .leaseLost(let message): message
        case .endpoint(let stop): stop.message
        case .store(let message): "the database is unavailable: \(message)"
        }
    }
}

/// A flag that stops a run from taking more devices; set by a signal handler, the heartbeat, the outcome
/// committer or the sender's results.
public final class StopFlag: Sendable {
    private let state = Mutex<StopReason?>(nil)
    private let parent: StopFlag?

    /// Creates a lowered flag. A flag with a `parent` is also raised while the parent is (a shard's claim
    /// stops when the whole run does; the run goes on when only the claim stopped).
    public init(parent: StopFlag? = nil) {
        self.parent = parent
    }

    /// Raises the flag; a flag already raised keeps its first reason.
    public func raise(_ reason: StopReason) {
        state.withLock { if $0 == nil { $0 = reason } }
    }

    /// Raises the flag for a signal.
    public func raise(signal: Int32) { raise(.signal(signal)) }

    /// The reason, once raised (its own first, else its parent's).
    public var reason: StopReason? { state.withLock { $0 } ?? parent?.reason }

    /// True once raised.
    public var isRaised: Bool { reason != nil }

    /// The signal that raised it, or 0.
    public var signal: Int32 {
        if case .signal(let n) = reason { return n }
        return 0
    }
}
