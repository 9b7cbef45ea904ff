import Foundation
import Logging
import PushCore
import PushSender
import Synchronization

/// Runs broadcasts and send jobs: one notification to every targeted device, safe under cron, crashes and
/// faults. It reaches storage only through ``DeliveryStore`` and sends through a ``Sender`` it does not own.
///
/// Its promise:
/// - transient is never final: a device is only done with a final outcome or a deferred one (retried by the
///   next run of the same id), and a run is `completed` only when every device is;
/// - outcomes are never dropped: they are committed with the checkpoint they cover, a failing write is
///   retried while the sender waits, and a database down past its outage limit stops the run as interrupted;
/// - after a crash, only devices in the in-flight window (sent, or answered but not yet committed) are sent
///   again, with the same apns-id and collapse id, and only those that may have reached APNs are flagged
///   possibly duplicated;
/// - one run per app at a time, by a fenced lease on the store's clock.
public final class Broadcaster: Sendable {
    let store: DeliveryStore
    let bundleId: String
    let configuration: BroadcastConfiguration
    let clock: SenderClock
    let sleeper: Sleeper
    let logger: Logger

    /// Creates a broadcaster for one app (`bundleId` is its topic).
    public init(
        store: DeliveryStore, bundleId: String, configuration: BroadcastConfiguration = .init(),
        clock: SenderClock = SystemClock(), sleeper: Sleeper = TaskSleeper(), logger: Logger = Logger(label: "broadcast")
    ) {
        self.store = store
        self.bundleId = bundleId
        self.configuration = configuration
        self.clock = clock
        self.sleeper = sleeper
        self.logger = logger
    }

    /// Runs or resumes broadcast `id` with `sender`: the main pass from the checkpoint (unless the broadcast
    /// completed before), then a retry pass over devices deferred by earlier runs. Stops early when `stop` is
    /// raised (signal), the lease is lost, an endpoint stops (credentials, outage) or the database stays
    /// unavailable. `progress` is called about every `progressInterval` seconds.
    ///
    /// Throws ``BroadcastError`` when the run cannot start (another owner's lease, unknown id, database).
    public func run(
        id: String, sender: Sender, stop: StopFlag, progressInterval: Double = 1,
        progress: @escaping @Sendable (BroadcastProgress) -> Void = { _ in }
    ) async throws(BroadcastError) -> BroadcastReport {
        let access = StoreAccess(store: store, outageLimitMs: configuration.storeOutageLimitMs, logger: logger)
        func storeError(_ e: DeliveryStoreError) -> BroadcastError { BroadcastError(code: .store, message: e.message) }

        let found: BroadcastRecord?
        do throws(DeliveryStoreError) {
            found = try await access.run("reading the broadcast") { store throws(DeliveryStoreError) in try store.broadcast(id: id) }
        } catch { throw storeError(error) }
        guard let existing = found else { throw BroadcastError(code: .notFound, message: "broadcast \(id) does not exist") }

        let app = existing.app
        let (owner, ttl) = (configuration.owner, configuration.leaseTtlMs)
        let lease: LeaseResult
        do throws(DeliveryStoreError) {
            lease = try await access.run("taking the broadcast lease") { store throws(DeliveryStoreError) in
                try store.acquireLease(app: app, broadcastId: id, owner: owner, ttlMs: ttl, ownerIsDead: BroadcastConfiguration.ownerIsDead)
            }
        } catch { throw storeError(error) }
        let fence: Int64
        switch lease {
        case .held(let other): throw BroadcastError(code: .running(other), message: "broadcast \(other) is running")
        case .acquired(let f): fence = f
        }

        let record: BroadcastRecord
        let doneBefore: Int
        do throws(DeliveryStoreError) {
            record = try await access.run("starting the run") { store throws(DeliveryStoreError) in try store.beginRun(id: id, fence: fence) }
            doneBefore = try await access.run("counting outcomes") { store throws(DeliveryStoreError) in try store.counts(id: id).done }
        } catch {
            try? await access.run("releasing the lease") { store throws(DeliveryStoreError) in try store.releaseLease(app: app, fence: fence) }
            throw storeError(error)
        }

        let started = ContinuousClock.now
        let run = RunState(record: record, fence: fence, doneBefore: doneBefore)
        let heartbeat = startHeartbeat(app: app, fence: fence, access: access, stop: stop)
        let reporter = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(Int64(progressInterval * 1000)))
                if Task.isCancelled { break }
                var p = run.live.snapshot
                p.elapsed = Self.seconds(since: started)
                progress(p)
            }
        }

        sender.beginRun()
        let before = sender.summary
        let settled = existing.state.isUnfinished
            ? await runPass(.main, run: run, sender: sender, access: access, stop: stop) : nil
        if !stop.isRaised {
            _ = await runPass(.retry, run: run, sender: sender, access: access, stop: stop)
        }
        let after = sender.summary
        heartbeat.cancel()
        reporter.cancel()
        var final = run.live.snapshot
        final.elapsed = Self.seconds(since: started)
        progress(final)

        // After a database outage stopped the run, the last writes are one attempt each: a database that is still
        // down cannot take them, and the run is resumable either way.
        let reason = stop.reason
        var storeDown = false
        if case .store = reason { storeDown = true }
        let retry = !storeDown
        let states = sender.breakerStates
        try? await access.run("saving the pruning breaker", retry: retry) { store throws(DeliveryStoreError) in
            try store.saveBreakerStates(app: app, states)
        }

        let state: BroadcastState = reason == nil ? .completed : .interrupted
        if case .leaseLost = reason {
            // Fenced out: the new owner records the state; this run may not write.
        } else {
            do throws(DeliveryStoreError) {
                try await access.run("finishing the run", retry: retry) { store throws(DeliveryStoreError) in
                    try store.finishRun(id: id, fence: fence, state: state, error: reason?.description, settledDispatched: settled)
                }
            } catch {
                logger.error("could not record the end of broadcast \(id): \(error.message)")
            }
            try? await access.run("releasing the lease", retry: retry) { store throws(DeliveryStoreError) in
                try store.releaseLease(app: app, fence: fence)
            }
        }
        let counts = (try? await access.run("counting outcomes", retry: retry) { store throws(DeliveryStoreError) in try store.counts(id: id) })
            ?? BroadcastCounts()
        let latest = (try? await access.run("reading the broadcast", retry: retry) { store throws(DeliveryStoreError) in
            try store.broadcast(id: id)
        }) ?? nil
        let tripped = Set(after.breakerTripped.dropFirst(before.breakerTripped.count)).union(sender.trippedEndpoints)
        return BroadcastReport(
            record: latest ?? record, counts: counts, stop: reason, breakerTripped: tripped.sorted(),
            discardedPrunes: run.discardedPrunes, sentThisRun: final.done, retriedThisRun: after.retried - before.retried,
            seconds: final.elapsed)
    }

    /// What one run shares between its passes.
    final class RunState: Sendable {
        let record: BroadcastRecord
        let fence: Int64
        let live: LiveProgress
        private let discarded = Mutex(0)

        /// Held BadDeviceToken prunes discarded at the end of the passes.
        var discardedPrunes: Int { discarded.withLock { $0 } }
        func discard(_ count: Int) { discarded.withLock { $0 += count } }

        init(record: BroadcastRecord, fence: Int64, doneBefore: Int) {
            self.record = record
            self.fence = fence
            live = LiveProgress(total: record.total, doneBefore: doneBefore)
        }
    }

    /// Sends one pass through the window and waits until every outcome is committed. Returns, for the main
    /// pass, the last token handed to the sender (the dispatch mark settles to it).
    private func runPass(_ pass: DeliveryPass, run: RunState, sender: Sender, access: StoreAccess, stop: StopFlag) async -> String? {
        let record = run.record
        let window = BatchWindow(limit: sender.configuration.window)
        let tracker = pass == .main ? CheckpointTracker() : nil
        let live = run.live
        let logger = logger
        let committer = OutcomeCommitter(
            access: access, app: record.app, job: .init(id: record.id, fence: run.fence, run: record.run),
            tracker: tracker, window: window, batchSize: configuration.commitBatchSize,
            intervalMs: configuration.commitIntervalMs,
            onCommitted: { live.add($0) },
            onFailure: { error in
                if error.code != .leaseLost {
                    logger.error("outcomes could not be recorded; stopping the broadcast", metadata: ["error": "\(error.message)"])
                }
                stop.raise(StopReason(error))
            })
        let feed = TargetFeed(
            pass: pass, record: record, fence: run.fence, access: access, batchSize: configuration.batchSize,
            markStep: max(1, sender.configuration.window / 4), rate: configuration.rate, sleeper: sleeper, clock: clock)
        let topic = bundleTopic(record.pushType)
        let collapseId = record.effectiveCollapseId
        await DeliveryPump(sender: sender, window: window, committer: committer, stop: stop).run {
            () throws(DeliveryStoreError) -> DeliveryPump.Step? in
            guard let next = try await feed.next() else { return nil }
            let token = next.target.token
            tracker?.dispatch(token.hex)
            let request = NotificationRequest(
                token: token, topic: topic, pushType: record.pushType, priority: record.priority,
                expiration: record.expiration, collapseId: collapseId,
                apnsId: APNsID.derived(broadcast: record.id, token: token), payload: record.payload)
            return DeliveryPump.Step(item: SendItem(request, environment: next.target.environment), maybeSentBefore: next.maybeSentBefore)
        }
        // Held BadDeviceToken prunes belong to this pass's committer: the breaker released them by now or never will.
        run.discard(sender.endRun())
        return tracker?.lastDispatched
    }

    /// Renews the lease every heartbeat. A busy or unavailable store is waited out (the run keeps its
    /// lease until the TTL); only another owner taking the lease stops the run.
    private func startHeartbeat(app: String, fence: Int64, access: StoreAccess, stop: StopFlag) -> Task<Void, Never> {
        let (interval, ttl, logger) = (configuration.heartbeatMs, configuration.leaseTtlMs, logger)
        return Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(interval))
                if Task.isCancelled { break }
                do throws(DeliveryStoreError) {
                    let held = try await access.run("renewing the lease") { store throws(DeliveryStoreError) in
                        try store.renewLease(app: app, fence: fence, ttlMs: ttl)
                    }
                    if !held { stop.raise(.leaseLost("another process took over the \(app) broadcast lease")) }
                } catch {
                    if error.code == .leaseLost {
                        stop.raise(StopReason(error))
                    } else {
                        logger.warning("could not renew the broadcast lease; will try again", metadata: ["error": "\(error.message)"])
                    }
                }
            }
        }
    }

    private func bundleTopic(_ pushType: PushType) -> String {
        let suffix = pushType.topicSuffix
        return suffix.isEmpty || bundleId.hasSuffix(suffix) ? bundleId : bundleId + suffix
    }

    static func seconds(since start: ContinuousClock.Instant) -> Double {
        let d = ContinuousClock.now - start
        return Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }
}
