import Dispatch
import NIOPosix
import Synchronization
import PushCore

/// The one place a process waits on its database: a bounded pool of threads that run the registry's blocking
/// calls (SQLite's C API, PostgreSQL round trips), so async code — request handlers, the engine, background
/// services — awaits them without ever blocking one of Swift's cooperative threads.
///
/// Bounded twice. ``threads`` threads run calls (a SQLite writer blocked for its busy timeout, or a PostgreSQL
/// statement waiting for its deadline, holds one); a call that has not *started* within ``maxQueueWaitMs`` is
/// not run and fails as `.busy` (kind ``StoreError/Kind/unavailable``: the HTTP API answers 503), and so does a
/// call that finds ``maxQueued`` others already waiting. So a locked or unreachable database turns into quick,
/// honest refusals instead of a growing queue of requests that all time out together.
public final class StoreExecutor: Sendable {
    /// Threads that run calls.
    public let threads: Int
    /// How long a call may wait for a thread before it is refused as busy.
    public let maxQueueWaitMs: Int
    /// How many calls may wait for a thread at once before more are refused as busy.
    public let maxQueued: Int
    private let pool: NIOThreadPool
    private let waiting = Atomic<Int>(0)
    /// The threads start at the first call: a registry that async code never uses (a CLI command's) costs none.
    private let started = Mutex(false)

    /// The default pool: 8 threads. SQLite serialises writes on one connection and reads on another, so a
    /// writer held by another process's lock ties up only the threads whose calls wait on it and leaves others
    /// for reads; PostgreSQL's per-process pool has 4 connections, and calls beyond them wait for one.
    public static let defaultThreads = 8

    /// A started pool of `threads` threads.
    public init(threads: Int = StoreExecutor.defaultThreads, maxQueueWaitMs: Int = 5000, maxQueued: Int = 1024) {
        self.threads = max(1, threads)
        self.maxQueueWaitMs = max(1, maxQueueWaitMs)
        self.maxQueued = max(1, maxQueued)
        pool = NIOThreadPool(numberOfThreads: self.threads)
    }

    deinit {
        // Not waited for: the last reference may go away on one of the pool's own threads.
        if started.withLock({ $0 }) { pool.shutdownGracefully { _ in } }
    }

    /// Runs `body` on a pool thread and returns its result; throws its error, or `.busy` when the call could not
    /// start in time (see the type's description). The call is never abandoned once started: a caller that awaits
    /// it sees its real outcome.
    public func run<T: Sendable>(_ body: @escaping @Sendable () throws(StoreError) -> T) async throws(StoreError) -> T {
        let result = await perform { () -> Result<T, StoreError> in Result { () throws(StoreError) -> T in try body() } }
        guard let result else { throw busyError }
        return try result.get()
    }

    /// The busy rule, for this executor and whatever queues calls in front of it (``RegistrationBatcher``): a call
    /// that has waited longer than ``maxQueueWaitMs`` (queued at `queuedNs`, uptime) does not run.
    public func waitedTooLong(queuedNs: UInt64, nowNs: UInt64 = DispatchTime.now().uptimeNanoseconds) -> Bool {
        nowNs &- queuedNs > UInt64(maxQueueWaitMs) * 1_000_000
    }

    /// What a call refused as busy fails with.
    public var busyError: StoreError {
        StoreError(.busy, "the database is not keeping up: no store thread was free within \(maxQueueWaitMs) ms")
    }

    /// Runs `body` on a pool thread; nil when it could not start in time (and then it did not run).
    public func perform<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T? {
        let queued = waiting.wrappingAdd(1, ordering: .relaxed).newValue
        guard queued <= maxQueued else {
            waiting.wrappingSubtract(1, ordering: .relaxed)
            return nil
        }
        started.withLock { running in
            if !running { pool.start() }
            running = true
        }
        let since = DispatchTime.now().uptimeNanoseconds
        return await withCheckedContinuation { (continuation: CheckedContinuation<T?, Never>) in
            pool.submit { state in
                self.waiting.wrappingSubtract(1, ordering: .relaxed)
                guard case .active = state, !self.waitedTooLong(queuedNs: since) else {
                    continuation.resume(returning: nil)
                    return
                }
                continuation.resume(returning: body())
            }
        }
    }
}
