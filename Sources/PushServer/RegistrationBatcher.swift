import Foundation
import PushCore
import PushStore

/// Group commit for registrations: requests queue up while the previous transaction commits, and one
/// writer thread commits each queue as a single transaction (`SQLiteRegistry.registerBatch`). Under load this
/// turns thousands of tiny transactions into a few large ones; idle, a request commits at once.
/// Blocking SQLite work stays off Swift's cooperative thread pool.
final class RegistrationBatcher: @unchecked Sendable {
    typealias Outcome = Result<RegistrationOutcome, StoreError>
    private struct Item {
        let request: RegistrationRequest
        let continuation: CheckedContinuation<Outcome, Never>
    }

    private let registry: any RegistryStore
    private let maxBatch: Int
    // `condition` guards `pending` and `stopped`.
    private let condition = NSCondition()
    private var pending: [Item] = []
    private var stopped = false
    private let finished = DispatchSemaphore(value: 0)

    /// Starts the writer thread.
    init(registry: any RegistryStore, maxBatch: Int = 512) {
        self.registry = registry
        self.maxBatch = maxBatch
        let thread = Thread { [self] in self.writerLoop() }
        thread.name = "pushctl-registrations"
        thread.start()
    }

    /// Queues a registration and waits for its transaction to commit.
    func register(_ request: RegistrationRequest) async -> Outcome {
        await withCheckedContinuation { continuation in
            condition.lock()
            if stopped {
                condition.unlock()
                continuation.resume(returning: .failure(StoreError(.busy, "server is shutting down")))
                return
            }
            pending.append(Item(request: request, continuation: continuation))
            condition.signal()
            condition.unlock()
        }
    }

    /// Commits everything queued, then stops the writer thread.
    func shutdown() {
        condition.lock()
        let wasStopped = stopped
        stopped = true
        condition.broadcast()
        condition.unlock()
        if !wasStopped { finished.wait() }
    }

    private func writerLoop() {
        while true {
            condition.lock()
            while pending.isEmpty && !stopped { condition.wait() }
            if pending.isEmpty && stopped {
                condition.unlock()
                finished.signal()
                return
            }
            let take = min(pending.count, maxBatch)
            let batch = Array(pending.prefix(take))
            pending.removeFirst(take)
            condition.unlock()

            let results = registry.registerBatch(batch.map(\.request))
            for (item, result) in zip(batch, results) { item.continuation.resume(returning: result) }
        }
    }
}
