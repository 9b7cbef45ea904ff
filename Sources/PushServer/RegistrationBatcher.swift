import PushCore
import PushStore
import ServiceLifecycle
import Synchronization

/// Group commit for registrations: requests queue up while the previous transaction commits, and the service's
/// loop commits each queue as a single transaction (`registerBatch`) on the store's executor. Under load this
/// turns thousands of tiny transactions into a few large ones; idle, a request commits at once. A service of the
/// server's group: at graceful shutdown it refuses new requests (503, the server is stopping) and commits what is
/// queued before it returns.
final class RegistrationBatcher: Service, Sendable {
    typealias Outcome = Result<RegistrationOutcome, StoreError>
    private struct Item: Sendable {
        let request: RegistrationRequest
        let continuation: CheckedContinuation<Outcome, Never>
    }

    private struct Queue {
        var pending: [Item] = []
        var stopped = false
    }

    private let registry: any RegistryStore
    private let maxBatch: Int
    private let queue = Mutex(Queue())
    /// Wakes the loop; holds at most one wake-up, since the loop takes everything queued when it wakes.
    private let wakeups: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation

    init(registry: any RegistryStore, maxBatch: Int = 512) {
        self.registry = registry
        self.maxBatch = maxBatch
        (wakeups, wake) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// Queues a registration and waits for its transaction to commit.
    func register(_ request: RegistrationRequest) async -> Outcome {
        await withCheckedContinuation { continuation in
            let queued = queue.withLock { q -> Bool in
                guard !q.stopped else { return false }
                q.pending.append(Item(request: request, continuation: continuation))
                return true
            }
            if queued {
                wake.yield()
            } else {
                continuation.resume(returning: .failure(StoreError(.busy, "the server is shutting down")))
            }
        }
    }

    /// Commits queued registrations until graceful shutdown, then what is left.
    func run() async throws {
        await withGracefulShutdownHandler {
            for await _ in wakeups { await commitQueued() }
        } onGracefulShutdown: {
            self.stop()
        }
        await commitQueued()
    }

    /// Refuses new registrations and ends the loop once it has committed what is queued.
    func stop() {
        queue.withLock { $0.stopped = true }
        wake.finish()
    }

    private func commitQueued() async {
        while true {
            let batch = queue.withLock { q -> [Item] in
                let take = min(q.pending.count, maxBatch)
                defer { q.pending.removeFirst(take) }
                return Array(q.pending.prefix(take))
            }
            guard !batch.isEmpty else { return }
            let requests = batch.map(\.request)
            let results: [Outcome]
            do throws(StoreError) {
                results = try await registry.run { $0.registerBatch(requests) }
            } catch {
                results = Array(repeating: .failure(error), count: batch.count)
            }
            for (item, result) in zip(batch, results) { item.continuation.resume(returning: result) }
        }
    }
}
