import Dispatch
import Foundation
import Logging
import PushCore
import PushSender

/// Commits results on its own thread, in batches: one transaction at least every `intervalMs` or every
/// `batchSize` results, holding the delivery-log rows, the broadcast outcomes, the prunes (as the store
/// decides them) and the checkpoint they cover. Each result's window slot is released only once its batch
/// is committed, so the window bounds both what is in flight and what a crash could send twice, and a slow
/// or locked store back-pressures the sender. A write that keeps failing is retried (``StoreAccess``) until
/// the database outage limit; then the committer fails: nothing more is written, slots are still released
/// so the run can drain, and the run stops as interrupted. A commit that finds its broadcast cancelled calls
/// `onCancelled`: the run takes no more devices, and what is already in flight is still recorded.
final class OutcomeCommitter: @unchecked Sendable {
    /// The broadcast part of every commit (nil for `pushctl send`: delivery log only).
    struct Job {
        var id: String
        var shard: Int
        var fence: Int64
        var run: Int
    }

    private let access: StoreAccess
    private let app: String
    private let job: Job?
    private let tracker: CheckpointTracker?
    private let window: BatchWindow?
    private let batchSize: Int
    private let recordEvents: Bool
    private let deliveryLog: DeliveryLogScope
    private let intervalNs: UInt64
    private let onCommitted: @Sendable ([DeliveryResult]) -> Void
    private let onFailure: @Sendable (DeliveryStoreError) -> Void
    private let onUnrecorded: @Sendable ([DeliveryResult]) -> Void
    private let onCancelled: @Sendable () -> Void

    // Guarded by `condition`.
    private let condition = NSCondition()
    private var buffer: [DeliveryResult] = []
    private var released: [DeviceToken] = []
    private var firstBuffered: UInt64?
    private var finishing = false
    /// Set once no more notifications will be sent: results still to come are committed as they arrive, since
    /// waiting to batch them would only delay the end of the run (a one-device `pushctl send` by the interval).
    private var eager = false
    private var failure: DeliveryStoreError?
    private let stopped = DispatchSemaphore(value: 0)

    init(
        access: StoreAccess, app: String, job: Job?, tracker: CheckpointTracker?, window: BatchWindow?,
        batchSize: Int, intervalMs: Int, recordEvents: Bool = false, deliveryLog: DeliveryLogScope = .all,
        onCommitted: @escaping @Sendable ([DeliveryResult]) -> Void,
        onFailure: @escaping @Sendable (DeliveryStoreError) -> Void,
        onUnrecorded: @escaping @Sendable ([DeliveryResult]) -> Void = { _ in },
        onCancelled: @escaping @Sendable () -> Void = {}
    ) {
        self.onUnrecorded = onUnrecorded
        self.onCancelled = onCancelled
        self.access = access
        self.app = app
        self.job = job
        self.tracker = tracker
        self.window = window
        // A batch never waits for more results than half the window can hold: the window's slots come back only
        // when their batch commits, so with a window of 50 and batches of 200 the sender would stall on a full
        // window until every commit interval (50 per 100 ms: 500 notifications/s).
        self.batchSize = max(1, min(batchSize, window.map { $0.capacity / 2 } ?? batchSize))
        self.recordEvents = recordEvents
        self.deliveryLog = deliveryLog
        self.intervalNs = UInt64(max(1, intervalMs)) * 1_000_000
        self.onCommitted = onCommitted
        self.onFailure = onFailure
        let thread = Thread { [self] in loop() }
        thread.name = "PushDelivery.committer"
        thread.start()
    }

    /// Queues a result (called on a transport thread).
    func add(_ result: DeliveryResult) {
        condition.lock()
        buffer.append(result)
        if !startTimerIfIdle() && buffer.count >= batchSize { condition.signal() }
        condition.unlock()
    }

    /// Queues a BadDeviceToken prune the breaker released (applied with the next batch, after the outcome).
    func releasePrune(_ token: DeviceToken) {
        condition.lock()
        released.append(token)
        _ = startTimerIfIdle()
        condition.unlock()
    }

    /// No more notifications will be sent: from now on commit results as soon as they arrive instead of waiting
    /// up to the batch interval for more (called when the source is exhausted, before draining the window).
    func flushEagerly() {
        condition.lock()
        eager = true
        condition.signal()
        condition.unlock()
    }

    /// Under `condition`: the first queued item starts the flush timer and wakes the thread, which may be in an
    /// untimed wait. True when it did.
    private func startTimerIfIdle() -> Bool {
        guard firstBuffered == nil else { return false }
        firstBuffered = DispatchTime.now().uptimeNanoseconds
        condition.signal()
        return true
    }

    /// Commits what is queued, stops the thread and returns the failure that stopped committing, if any.
    func finish() async -> DeliveryStoreError? {
        await withCheckedContinuation { (c: CheckedContinuation<DeliveryStoreError?, Never>) in
            DispatchQueue.global().async { [self] in c.resume(returning: finishBlocking()) }
        }
    }

    private func finishBlocking() -> DeliveryStoreError? {
        condition.lock()
        finishing = true
        condition.signal()
        condition.unlock()
        stopped.wait()
        condition.lock()
        defer { condition.unlock() }
        return failure
    }

    private func loop() {
        while true {
            condition.lock()
            while !finishing {
                if buffer.count >= batchSize { break }
                if eager, !buffer.isEmpty || !released.isEmpty { break }
                if let first = firstBuffered {
                    let due = first + intervalNs
                    let now = DispatchTime.now().uptimeNanoseconds
                    if now >= due { break }
                    _ = condition.wait(until: Date(timeIntervalSinceNow: Double(due - now) / 1e9))
                } else {
                    condition.wait()
                }
            }
            let batch = buffer
            let prunes = released
            buffer.removeAll(keepingCapacity: true)
            released.removeAll()
            firstBuffered = nil
            let failed = failure != nil
            let last = finishing
            condition.unlock()

            if !batch.isEmpty || !prunes.isEmpty {
                if failed { onUnrecorded(batch) } else { commit(batch, prunes) }
                window?.release(batch.count)
            }
            if last {
                condition.lock()
                let more = !buffer.isEmpty || !released.isEmpty
                condition.unlock()
                if !more { break }
            }
        }
        stopped.signal()
    }

    private func commit(_ batch: [DeliveryResult], _ prunes: [DeviceToken]) {
        let outcomes = batch.map(Self.outcome)
        // The checkpoint covers only outcomes that count as done; a pending marker holds it back.
        let done = batch.filter { $0.kind != .unsent }.map(\.token.hex)
        let checkpoint = tracker?.checkpoint(committing: done)
        let part = job.map { OutcomeBatch.Job(id: $0.id, shard: $0.shard, fence: $0.fence, run: $0.run, checkpoint: checkpoint) }
        var outcomeBatch = OutcomeBatch(app: app, job: part, outcomes: outcomes, releasedPrunes: prunes)
        outcomeBatch.recordEvents = recordEvents
        outcomeBatch.deliveryLog = deliveryLog
        do {
            let receipt = try access.blocking("recording \(batch.count) outcomes") { store throws(DeliveryStoreError) in
                try store.commit(outcomeBatch)
            }
            tracker?.committed(done)
            var results = batch
            if !receipt.pruned.isEmpty {
                for i in results.indices where receipt.pruned.contains(results[i].token) { results[i].pruned = true }
            }
            logCommitted(results)
            onCommitted(results)
            if receipt.cancelled { onCancelled() }
        } catch {
            condition.lock()
            failure = error
            condition.unlock()
            onFailure(error)
            onUnrecorded(batch)
        }
    }

    /// One debug line per committed outcome (`LOG_LEVEL=debug`): app, job, apns-id, the masked token, status
    /// and reason as metadata. Never the payload.
    private func logCommitted(_ results: [DeliveryResult]) {
        let logger = access.logger
        guard logger.logLevel <= .debug else { return }
        for r in results {
            var metadata: Logger.Metadata = [
                "app": "\(app)", "apnsId": "\(r.apnsId)", "token": "\(r.token.masked)", "status": "\(r.status)",
                "outcome": "\(r.kind.rawValue)",
            ]
            if let job { metadata["job"] = "\(job.id)" }
            if let reason = r.reason { metadata["reason"] = "\(reason.rawValue)" }
            if r.pruned { metadata["pruned"] = "true" }
            logger.debug("outcome committed", metadata: metadata)
        }
    }

    /// A sender result in the store's terms (an unsent one becomes a pending marker).
    static func outcome(_ r: DeliveryResult) -> DeliveryOutcome {
        let kind: DeliveryOutcome.Kind
        switch r.kind {
        case .accepted: kind = .accepted
        case .tokenDead: kind = .tokenDead
        case .rejected: kind = .rejected
        case .deferred: kind = .deferred
        case .unsent: kind = .pending
        }
        var prune: PruneRequest?
        if case .delete(let request) = r.prune { prune = request }
        return DeliveryOutcome(
            token: r.token, kind: kind, apnsId: r.apnsId, uniqueId: r.uniqueId, status: r.status,
            reason: r.reason?.rawValue ?? r.stop?.message ?? r.error, attempts: r.attempts,
            possiblyDuplicated: r.possiblyDuplicated, prune: prune, startedMs: r.startedAtMs, finishedMs: r.finishedAtMs)
    }
}
