import Dispatch
import Foundation
import PushCore
import PushSender
import PushStore
import ServiceLifecycle
import Synchronization
import PushLanes

/// Group commit for registrations: requests queue up while the previous transaction commits, and the batcher's own
/// writer thread commits each queue as a single transaction (`registerBatch`). Under load this turns thousands of
/// tiny transactions into a few large ones; idle, a request commits at once. A service of the server's group: it
/// starts the thread when the group runs, and at graceful shutdown it refuses new requests (503, the server is
/// stopping), commits what is queued and ends the thread before it returns.
///
/// Its own lane, not the store executor's pool: registration is the hottest write path, and a pool hop per batch
/// (the loop woken through a stream per request, the batch handed to one of the pool's threads and back) cost
/// thread switches on every request. The thread is woken once per batch — only when it is idle — and resumes each
/// request itself. What the answer needs read back (a device that was not new, or was given channels or installation
/// fields) is read on the same thread right after the commit, not in another hop.
/// It keeps the executor's rule for a busy database: a request that waited longer than the executor's
/// ``StoreExecutor/maxQueueWaitMs`` for its batch to start is refused as busy (503) without running, and a batch the
/// database refuses (locked past the busy timeout, unreachable) fails every request in it with that error.
final class RegistrationBatcher: Service, Sendable {
    /// A committed registration and, unless the device is new without channels or installation fields (then the
    /// request is exactly what was stored), the device as stored and its installation fields (when any were given).
    struct Registered: Sendable {
        var outcome: RegistrationOutcome
        var device: RegisteredDevice?
        var installation: Installation?
    }
    typealias Outcome = Result<Registered, StoreError>
    private struct Item: Sendable {
        let request: RegistrationRequest
        let queuedNs: UInt64
        let continuation: UnsafeContinuation<Outcome, Never>
    }

    private struct Queue: ~Copyable {
        var pending: [Item] = []
        /// The thread is parked (or about to park) on `wakeup`: the next request signals it, once.
        var idle = false
        var stopped = false
        /// The thread has ended (after `stopped`, with nothing queued).
        var ended = false
        /// Resumed by the thread once it has committed everything queued after `stopped`.
        var finished: [CheckedContinuation<Void, Never>] = []
    }

    private let registry: any RegistryStore
    private let maxBatch: Int
    /// The executor whose busy rule a queued registration follows.
    private let executor: StoreExecutor
    private let queue = Mutex(Queue())
    private let wakeup = DispatchSemaphore(value: 0)
    private let started = Atomic<Bool>(false)

    init(registry: any RegistryStore, maxBatch: Int = 512) {
        self.registry = registry
        self.maxBatch = maxBatch
        executor = registry.executor
    }

    /// Queues a registration and waits for its transaction to commit.
    func register(_ request: RegistrationRequest) async -> Outcome {
        await withUnsafeContinuation { continuation in
            let item = Item(request: request, queuedNs: DispatchTime.now().uptimeNanoseconds, continuation: continuation)
            let (queued, wake) = queue.withLock { q -> (Bool, Bool) in
                guard !q.stopped else { return (false, false) }
                q.pending.append(item)
                guard q.idle else { return (true, false) }
                q.idle = false
                return (true, true)
            }
            if wake { wakeup.signal() }
            if !queued { continuation.resume(returning: .failure(StoreError(.busy, "the server is shutting down"))) }
        }
    }

    /// Starts the writer thread, waits for graceful shutdown (or cancellation), then commits what is queued.
    func run() async throws {
        startThread()
        try? await gracefulShutdown()
        await stop()
    }

    /// Refuses new registrations and returns once the thread has committed what is queued and ended.
    func stop() async {
        guard started.load(ordering: .acquiring) else {
            // No thread ever ran (the group never started it): nothing will commit what is queued.
            let orphans = queue.withLock { q -> [Item] in
                q.stopped = true
                defer { q.pending = [] }
                return q.pending
            }
            for item in orphans { item.continuation.resume(returning: .failure(StoreError(.busy, "the server is shutting down"))) }
            return
        }
        await withCheckedContinuation { (finished: CheckedContinuation<Void, Never>) in
            let (ended, wake) = queue.withLock { q -> (Bool, Bool) in
                q.stopped = true
                guard !q.ended else { return (true, false) }
                q.finished.append(finished)
                defer { q.idle = false }
                return (false, q.idle)
            }
            if ended { finished.resume() }
            if wake { wakeup.signal() }
        }
    }

    private func startThread() {
        guard !started.exchange(true, ordering: .acquiringAndReleasing) else { return }
        NamedThread.start("pushctl-regs") { [self] in writerLoop() }
    }

    /// The writer thread: commits batches while requests are queued, parks when none are, ends once stopped and
    /// drained.
    private func writerLoop() {
        while true {
            let (batch, finished) = queue.withLock { q -> ([Item], [CheckedContinuation<Void, Never>]?) in
                guard q.pending.isEmpty else {
                    let take = min(q.pending.count, maxBatch)
                    defer { q.pending.removeFirst(take) }
                    return (Array(q.pending.prefix(take)), nil)
                }
                if q.stopped {
                    q.ended = true
                    defer { q.finished = [] }
                    return ([], q.finished)
                }
                q.idle = true
                return ([], nil)
            }
            if let finished {
                for waiter in finished { waiter.resume() }
                return
            }
            if batch.isEmpty {
                wakeup.wait()
                continue
            }
            commit(batch)
        }
    }

    /// Commits one batch on this thread and resumes its requests. A request that waited longer than the store
    /// executor would let a call wait for a thread is refused as busy, as the executor would refuse it.
    private func commit(_ batch: [Item]) {
        let now = DispatchTime.now().uptimeNanoseconds
        var live: [Item] = []
        live.reserveCapacity(batch.count)
        for item in batch {
            if executor.waitedTooLong(queuedNs: item.queuedNs, nowNs: now) {
                item.continuation.resume(returning: .failure(executor.busyError))
            } else {
                live.append(item)
            }
        }
        guard !live.isEmpty else { return }
        let results = registry.registerBatch(live.map(\.request))
        var readBack: [(Item, RegistrationOutcome)] = []
        for (item, result) in zip(live, results) {
            switch result {
            case .success(let outcome) where Self.answersFromRequest(item.request, outcome):
                item.continuation.resume(returning: .success(Registered(outcome: outcome)))
            case .success(let outcome): readBack.append((item, outcome))
            case .failure(let error): item.continuation.resume(returning: .failure(error))
            }
        }
        for (item, outcome) in readBack { item.continuation.resume(returning: Self.readBack(item.request, outcome, from: registry)) }
    }

    /// A new device without channels or installation fields is exactly what the request stored.
    static func answersFromRequest(_ request: RegistrationRequest, _ outcome: RegistrationOutcome) -> Bool {
        outcome == .created && request.channels == nil && request.installation.isEmpty
    }

    /// Reads a committed registration back (carried-over or normalised channels, an existing environment,
    /// installation fields), for the answer.
    @available(*, noasync, message: "blocks on the database")
    static func readBack(_ request: RegistrationRequest, _ outcome: RegistrationOutcome, from registry: any RegistryStore) -> Outcome {
        do throws(StoreError) {
            let device = try registry.device(app: request.app, token: request.token)
            let installation = !request.installation.isEmpty ? try registry.installation(app: request.app, token: request.token) : nil
            return .success(Registered(outcome: outcome, device: device, installation: installation))
        } catch {
            return .failure(error)
        }
    }
}
