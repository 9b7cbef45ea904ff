import Dispatch
import PushCore
import PushLanes

/// The one place a process waits on its database: a ``BlockingLane`` of its own whose threads run the registry's blocking
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
    public var threads: Int { lane.threads }
    /// How long a call may wait for a thread before it is refused as busy.
    public let maxQueueWaitMs: Int
    /// How many calls may wait for a thread at once before more are refused as busy.
    public var maxQueued: Int { lane.maxQueued }
    /// The threads (started as calls arrive: a registry that async code never uses — a CLI command's — costs none).
    private let lane: BlockingLane

    /// The default pool: 8 threads. SQLite serialises writes on one connection and spreads reads over a few
    /// reader connections, so a writer held by another process's lock ties up only the threads whose calls wait
    /// on it and leaves others for reads; PostgreSQL's per-process pool has 4 connections, and calls beyond them
    /// wait for one.
    public static let defaultThreads = 8

    /// A pool of up to `threads` threads.
    public init(threads: Int = StoreExecutor.defaultThreads, maxQueueWaitMs: Int = 5000, maxQueued: Int = 1024) {
        self.maxQueueWaitMs = max(1, maxQueueWaitMs)
        lane = BlockingLane(name: "pushctl-store", threads: threads, maxQueueWaitMs: self.maxQueueWaitMs, maxQueued: maxQueued)
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
        await lane.perform(body)
    }
}
