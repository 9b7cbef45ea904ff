import Dispatch
import Foundation
import Logging
import PushCore
import PushLanes

/// Commits results on its own thread, in batches: one transaction at least every `intervalMs` or every
/// `batchSize` results, holding the rows of devices that need action later, the job's counts, the prunes (as
/// the store decides them) and the checkpoint they cover — an accepted device of a broadcast writes no row of
/// its own. A device's slot of the *ahead* window is given back only once it is committed and, in the main
/// pass, behind the checkpoint (``CheckpointTracker``), so the window bounds what a crash could make the next
/// claim send again, and a slow or locked store back-pressures the sender (its in-flight slots are the pump's,
/// freed at each answer). A write that keeps failing is retried (``StoreAccess``) until the database outage
/// limit; then the committer fails: nothing more is written, the ahead window opens so the run can drain, and
/// the run stops as interrupted. A commit that finds its broadcast cancelled calls `onCancelled`: the run takes
/// no more devices, and what is already in flight is still recorded.
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
    private let ahead: BatchWindow?
    private let batchSize: Int
    private let recordEvents: Bool
    private let deliveryLog: DeliveryLogScope
    private let direct: Bool
    private let intervalNs: UInt64
    private let onCommitted: @Sendable ([DeliveryResult]) -> Void
    private let onFailure: @Sendable (DeliveryStoreError) -> Void
    private let onUnrecorded: @Sendable ([DeliveryResult]) -> Void
    private let onCancelled: @Sendable () -> Void

    // Guarded by `condition`.
    private let condition = NSCondition()
    private var buffer: [(result: DeliveryResult, seq: Int)] = []
    private var released: [DeviceToken] = []
    private var firstBuffered: UInt64?
    private var finishing = false
    /// Set once no more notifications will be sent: results still to come are committed as they arrive, since
    /// waiting to batch them would only delay the end of the run (a one-device `pushctl send` by the interval).
    private var eager = false
    private var failure: DeliveryStoreError?
    /// Signalled as the thread's last act: ``finish()`` awaits it without parking a thread.
    private let stopped = ThreadEnd()

    /// `tracker`: the main pass's checkpoint (nil for a retry pass — whose devices all have rows — and for
    /// `pushctl send`). `ahead`: the window whose slots are freed as described above. `direct`: the devices were
    /// listed tokens (``DeliveryLogScope/failures`` logs their accepted notifications).
    init(
        access: StoreAccess, app: String, job: Job?, tracker: CheckpointTracker?, ahead: BatchWindow?,
        batchSize: Int, intervalMs: Int, recordEvents: Bool = false, deliveryLog: DeliveryLogScope = .default,
        direct: Bool = false,
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
        self.ahead = ahead
        // A batch never waits for more results than half the in-flight window (a quarter of the ahead window)
        // can hold: with a small window and batches of 200, the ahead window would fill before a batch did, and
        // the sender would stall until every commit interval.
        self.batchSize = max(1, min(batchSize, ahead.map { $0.capacity / 4 } ?? batchSize))
        self.recordEvents = recordEvents
        self.deliveryLog = deliveryLog
        self.direct = direct
        self.intervalNs = UInt64(max(1, intervalMs)) * 1_000_000
        self.onCommitted = onCommitted
        self.onFailure = onFailure
        NamedThread.start("pushctl-commit") { [self] in loop() }
    }

    /// Queues the result of the device with sequence number `seq` (called on a transport thread).
    func add(_ result: DeliveryResult, seq: Int) {
        condition.lock()
        buffer.append((result, seq))
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
        requestFinish()
        await stopped.wait()
        return recordedFailure()
    }

    private func requestFinish() {
        condition.lock()
        finishing = true
        condition.signal()
        condition.unlock()
    }

    private func recordedFailure() -> DeliveryStoreError? {
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
                if failed { onUnrecorded(batch.map(\.result)) } else { commit(batch, prunes) }
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

    private func commit(_ answers: [(result: DeliveryResult, seq: Int)], _ prunes: [DeviceToken]) {
        let batch = answers.map(\.result)
        var outcomes = batch.map(Self.outcome)
        var part = job.map { OutcomeBatch.Job(id: $0.id, shard: $0.shard, fence: $0.fence, run: $0.run) }
        let releasing: Int
        if let tracker {
            let plan = tracker.commit(answers.map {
                CheckpointTracker.Answer(
                    seq: $0.seq, kind: Self.kind($0.result.kind),
                    retried: $0.result.attempts > 1, possiblyDuplicated: $0.result.possiblyDuplicated)
            })
            for i in outcomes.indices { outcomes[i].mayHaveRow = plan.mayHaveRow[i] }
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            for token in plan.held {
                outcomes.append(DeliveryOutcome(
                    token: token, kind: .pending, notificationId: "", status: 0, attempts: 0, possiblyDuplicated: true,
                    startedMs: now, finishedMs: now))
            }
            part?.checkpoint = plan.checkpoint
            part?.accepted = plan.accepted
            releasing = plan.released
        } else {
            // A retry pass: every device has a row (deferred or pending), replaced or removed now, and its accepted
            // devices are counted at once. `pushctl send`: no job, no rows.
            if job != nil {
                for i in outcomes.indices { outcomes[i].mayHaveRow = true }
                for r in batch where r.kind == .accepted {
                    part?.accepted.add(retried: r.attempts > 1, possiblyDuplicated: r.possiblyDuplicated)
                }
            }
            releasing = batch.count
        }
        var outcomeBatch = OutcomeBatch(app: app, job: part, outcomes: outcomes, releasedPrunes: prunes)
        outcomeBatch.recordEvents = recordEvents
        outcomeBatch.deliveryLog = deliveryLog
        outcomeBatch.direct = direct
        do {
            let receipt = try access.blocking("recording \(batch.count) outcomes") { store throws(DeliveryStoreError) in
                try store.commit(outcomeBatch)
            }
            ahead?.release(releasing)
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
            // The stop first, then the window: opened first, it let the pump, woken before the flag was up, hand out
            // devices past the ahead window until the flag rose — sent, never committed, and sent again by the next
            // run (DatabaseOutageFaultTests: 452 sent twice against the bound of 400, with the cores busy).
            onFailure(error)
            ahead?.open()
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
                "app": "\(app)", "notificationId": "\(r.notificationId)", "token": "\(r.token.masked)", "status": "\(r.status)",
                "outcome": "\(r.kind.rawValue)",
            ]
            if let job { metadata["job"] = "\(job.id)" }
            if let reason = r.reason { metadata["reason"] = "\(reason.rawValue)" }
            if r.pruned { metadata["pruned"] = "true" }
            logger.debug("outcome committed", metadata: metadata)
        }
    }

    /// A sender result kind in the store's terms (an unsent one becomes a pending marker).
    static func kind(_ kind: DeliveryResult.Kind) -> DeliveryOutcome.Kind {
        switch kind {
        case .accepted: .accepted
        case .tokenDead: .tokenDead
        case .rejected: .rejected
        case .deferred: .deferred
        case .unsent: .pending
        }
    }

    /// A sender result in the store's terms (an unsent one becomes a pending marker).
    static func outcome(_ r: DeliveryResult) -> DeliveryOutcome {
        let kind = Self.kind(r.kind)
        var prune: PruneRequest?
        if case .delete(let request) = r.prune { prune = request }
        return DeliveryOutcome(
            token: r.token, kind: kind, notificationId: r.notificationId, uniqueId: r.uniqueId, status: r.status,
            reason: r.reason?.rawValue ?? r.stop?.message ?? r.error, attempts: r.attempts,
            possiblyDuplicated: r.possiblyDuplicated, prune: prune, startedMs: r.startedAtMs, finishedMs: r.finishedAtMs,
            service: r.service)
    }
}
