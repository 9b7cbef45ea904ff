import Foundation
import Logging
import PushCore
import Synchronization

/// Runs broadcasts and send jobs: one notification to every targeted device, safe under cron, crashes and
/// faults. It reaches storage only through ``DeliveryStore`` and sends through a ``APNsSender`` it does not own.
///
/// Its promise:
/// - transient is never final: a device is only done with a final outcome or a deferred one (retried by the
///   next run of the same id), and a run is `completed` only when every device is;
/// - outcomes are never dropped: they are committed with the checkpoint they cover, a failing write is
///   retried while the sender waits, and a database down past its outage limit stops the run as interrupted;
/// - after a crash, only devices of the ahead window — twice the in-flight window: sent, answered but not yet
///   committed, or committed past the checkpoint — are sent again, each at most once more, with the same apns-id
///   and collapse id, flagged possibly duplicated; a device that waits (backoff, an unreachable endpoint) is held
///   with a row of its own so the checkpoint does not stall behind it;
/// - an accepted device writes nothing of its own: it is counted when the checkpoint passes it;
/// - a broadcast is split into range shards of the token key space; each is worked on by one worker at a time,
///   under a fenced claim on the store's clock, so several processes on several hosts share a broadcast.
public final class Broadcaster: Sendable {
    let store: DeliveryStore
    let configuration: BroadcastConfiguration
    let clock: SenderClock
    let sleeper: Sleeper
    let logger: Logger

    /// Creates a broadcaster (a broadcast names its app; the app's sender is given to each run).
    public init(
        store: DeliveryStore, configuration: BroadcastConfiguration = .init(),
        clock: SenderClock = SystemClock(), sleeper: Sleeper = TaskSleeper(), logger: Logger = Logger(label: "broadcast")
    ) {
        self.store = store
        self.configuration = configuration
        self.clock = clock
        self.sleeper = sleeper
        self.logger = logger
    }

    /// Runs or resumes broadcast `id` with `sender`: starts it (a pending one is split into shards; a
    /// completed one starts a new round for its deferred devices), then claims its shards one after another —
    /// alongside any other process doing the same — and works on each (see ``work(on:of:sender:stop:live:)``),
    /// and returns once every shard is done by anyone, or early when `stop` is raised (signal), an endpoint
    /// stops (credentials, outage) or the database stays unavailable. While other workers hold the last shards
    /// it waits for them (and takes over those whose claim expires). `progress` is called about every
    /// `progressInterval` seconds with this process's work.
    ///
    /// Throws ``BroadcastError`` when the run cannot start (unknown id, database).
    public func run(
        id: String, sender: any DeliverySender, stop: StopFlag, progressInterval: Double = 1,
        progress: @escaping @Sendable (BroadcastProgress) -> Void = { _ in }
    ) async throws(BroadcastError) -> BroadcastReport {
        let access = StoreAccess(store: store, outageLimitMs: configuration.storeOutageLimitMs, logger: logger)
        func storeError(_ e: DeliveryStoreError) -> BroadcastError { BroadcastError(code: .store, message: e.message) }

        let found: BroadcastRecord?
        do throws(DeliveryStoreError) {
            found = try await access.run("reading the broadcast") { store throws(DeliveryStoreError) in try store.broadcast(id: id) }
        } catch { throw storeError(error) }
        guard found != nil else { throw BroadcastError(code: .notFound, message: "broadcast \(id) does not exist") }

        let record: BroadcastRecord
        let doneBefore: Int
        let shardSize = configuration.shardSize
        do throws(DeliveryStoreError) {
            record = try await access.run("starting the broadcast") { store throws(DeliveryStoreError) in
                try store.startBroadcast(id: id, shardSize: shardSize, newRound: true)
            }
            doneBefore = try await access.run("counting outcomes") { store throws(DeliveryStoreError) in try store.counts(id: id).done }
        } catch { throw storeError(error) }

        let started = ContinuousClock.now
        let live = LiveProgress(total: record.total, doneBefore: doneBefore)
        // Other processes on the same broadcast (workers, another run of this id) count in the progress.
        let othersBefore = await committedByOthers(id: id, access: access) ?? 0
        let reporter = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(Int64(progressInterval * 1000)))
                if Task.isCancelled { break }
                live.noteOthers(done: await committedByOthers(id: id, access: access).map { $0 - othersBefore }, waitingFor: nil)
                var p = live.snapshot
                p.elapsed = Self.seconds(since: started)
                progress(p)
            }
        }

        let before = sender.summary
        let (owner, ttl, pollMs) = (configuration.owner, configuration.leaseTtlMs, configuration.pollMs)
        var discarded = 0
        while !stop.isRaised {
            let claimed: BroadcastShard?
            do throws(DeliveryStoreError) {
                claimed = try await access.run("claiming a shard") { store throws(DeliveryStoreError) in
                    try store.claimShard(broadcastId: id, apps: nil, owner: owner, ttlMs: ttl, ownerIsDead: BroadcastConfiguration.ownerIsDead)
                }
            } catch {
                stop.raise(StopReason(error))
                break
            }
            if let shard = claimed {
                live.noteOthers(done: nil, waitingFor: [])
                let result = await work(on: shard, of: record, sender: sender, stop: stop, live: live)
                discarded += result.discardedPrunes
                // A shard taken over is the new owner's: go on with the others. Any other stop of the claim
                // (endpoint, database) ends the run.
                if let reason = result.stop, !stop.isRaised {
                    if case .leaseLost = reason { continue }
                    stop.raise(reason)
                }
                continue
            }
            // Nothing to claim: finished, or other workers hold the remaining shards.
            let latest = try? await access.run("reading the broadcast", retry: false) { store throws(DeliveryStoreError) in
                try store.broadcast(id: id)
            }
            if let latest = latest ?? nil, latest.state == .completed || latest.state == .cancelled { break }
            live.noteOthers(done: nil, waitingFor: await holders(of: id, access: access))
            await access.waitForWork(timeoutMs: pollMs)
        }
        let after = sender.summary
        reporter.cancel()
        live.noteOthers(done: await committedByOthers(id: id, access: access).map { $0 - othersBefore }, waitingFor: [])
        var final = live.snapshot
        final.elapsed = Self.seconds(since: started)
        progress(final)

        // After a database outage stopped the run, the last reads and writes are one attempt each: a database
        // that is still down cannot take them, and the run is resumable either way.
        let reason = stop.reason
        var retry = true
        if case .store = reason { retry = false }
        let states = sender.breakerStates
        let app = record.app
        try? await access.run("saving the pruning breaker", retry: retry) { store throws(DeliveryStoreError) in
            try store.saveBreakerStates(app: app, states)
        }
        let counts = (try? await access.run("counting outcomes", retry: retry) { store throws(DeliveryStoreError) in try store.counts(id: id) })
            ?? BroadcastCounts()
        var latest = (try? await access.run("reading the broadcast", retry: retry) { store throws(DeliveryStoreError) in
            try store.broadcast(id: id)
        }) ?? nil
        // A stop between two claims released no shard, so no shard's end said the broadcast was interrupted: say
        // it here (unless another worker's claim is live), so the status never reads running while nothing runs.
        if let reason, latest?.state == .running {
            let why = reason.description
            latest = (try? await access.run("recording the stop", retry: retry) { store throws(DeliveryStoreError) in
                try store.noteStopped(id: id, error: why)
                return try store.broadcast(id: id)
            }) ?? latest
        }
        let workers = (try? await access.run("reading the workers", retry: retry) { store throws(DeliveryStoreError) in
            try store.workers(id: id)
        }) ?? [:]
        let tripped = Set(after.breakerTripped.dropFirst(before.breakerTripped.count)).union(sender.trippedEndpoints)
        return BroadcastReport(
            record: latest ?? record, counts: counts, stop: reason, breakerTripped: tripped.sorted(),
            discardedPrunes: discarded, sentThisRun: final.done, retriedThisRun: after.retried - before.retried,
            workers: workers, seconds: final.elapsed)
    }

    /// What a claim of a shard ended with.
    struct ShardResult: Sendable {
        /// Why the claim stopped early (its own reason, or the run's), or nil when the shard is done.
        var stop: StopReason?
        /// Held BadDeviceToken prunes discarded at the end of its passes.
        var discardedPrunes: Int
    }

    /// Works on a claimed shard of `record` with `sender`: the main pass from the shard's checkpoint (unless an
    /// earlier claim went through it), then a retry pass over the shard's devices deferred by earlier claims;
    /// the claim is renewed meanwhile. Then gives the shard back: finished, or released when the claim stopped
    /// early (claimable again at once after a signal, after ``BroadcastConfiguration/shardRetryMs`` after an APNs
    /// or database failure). A claim fenced out (taken over) writes nothing more. Raising `stop` stops the claim;
    /// the claim's own stops (lease lost, endpoint, database) do not raise `stop`.
    func work(on shard: BroadcastShard, of record: BroadcastRecord, sender: any DeliverySender, stop outer: StopFlag, live: LiveProgress)
        async -> ShardResult
    {
        let access = StoreAccess(store: store, outageLimitMs: configuration.storeOutageLimitMs, logger: logger)
        let stop = StopFlag(parent: outer)
        let claim = ClaimState(record: record, shard: shard, live: live)
        sender.beginRun()
        let heartbeat = startHeartbeat(shard: shard, access: access, stop: stop)
        var settled: String?
        var mainDone = shard.mainDone
        if !shard.mainDone {
            settled = await runPass(.main, claim: claim, sender: sender, access: access, stop: stop)
            mainDone = !stop.isRaised
        }
        if !stop.isRaised {
            _ = await runPass(.retry, claim: claim, sender: sender, access: access, stop: stop)
        }
        heartbeat.cancel()

        let reason = stop.reason
        var retry = true
        var retryAfterMs: Int64 = 0
        switch reason {
        case .store: (retry, retryAfterMs) = (false, configuration.shardRetryMs)
        case .endpoint(let endpointStop) where endpointStop.kind != .stopping: retryAfterMs = configuration.shardRetryMs
        default: break
        }
        if case .leaseLost = reason {
            // Fenced out: the new owner has the shard; this claim may not write.
        } else {
            let end: ShardEnd = reason.map {
                .released(error: $0.description, retryAfterMs: retryAfterMs, mainDone: mainDone, settledDispatched: settled)
            } ?? .finished
            let (id, index, fence) = (shard.broadcastId, shard.index, shard.fence)
            do throws(DeliveryStoreError) {
                _ = try await access.run("finishing shard \(index)", retry: retry) { store throws(DeliveryStoreError) in
                    try store.finishShard(id: id, index: index, fence: fence, end: end)
                }
            } catch {
                logger.error("could not record the end of shard \(index) of broadcast \(id): \(error.message)")
            }
        }
        return ShardResult(stop: reason, discardedPrunes: claim.discardedPrunes)
    }

    /// What one claim shares between its passes.
    final class ClaimState: Sendable {
        let record: BroadcastRecord
        let shard: BroadcastShard
        let live: LiveProgress
        private let discarded = Mutex(0)

        /// Held BadDeviceToken prunes discarded at the end of the passes.
        var discardedPrunes: Int { discarded.withLock { $0 } }
        func discard(_ count: Int) { discarded.withLock { $0 += count } }

        init(record: BroadcastRecord, shard: BroadcastShard, live: LiveProgress) {
            self.record = record
            self.shard = shard
            self.live = live
        }
    }

    /// Sends one pass through the window and waits until every outcome is committed. Returns, for the main
    /// pass, the last token handed to the sender (the dispatch mark settles to it).
    private func runPass(_ pass: DeliveryPass, claim: ClaimState, sender: any DeliverySender, access: StoreAccess, stop: StopFlag) async -> String? {
        let (record, shard) = (claim.record, claim.shard)
        let (inFlight, ahead) = DeliveryPump.windows(for: sender)
        let tracker = pass == .main ? CheckpointTracker(holdAfter: inFlight.capacity / 2) : nil
        let live = claim.live
        let logger = logger
        let committer = OutcomeCommitter(
            access: access, app: record.app, job: .init(id: record.id, shard: shard.index, fence: shard.fence, run: shard.run),
            tracker: tracker, ahead: ahead, batchSize: configuration.commitBatchSize,
            intervalMs: configuration.commitIntervalMs, recordEvents: configuration.webhookApps.contains(record.app),
            deliveryLog: configuration.deliveryLog(for: record.app), direct: DeliveryLogScope.isDirect(listedTokens: record.explicitTokens, audience: record.targeting?.audience),
            onCommitted: { live.add($0) },
            onFailure: { error in
                if error.code != .leaseLost {
                    logger.error("outcomes could not be recorded; stopping the broadcast", metadata: ["error": "\(error.message)"])
                }
                stop.raise(StopReason(error))
            },
            onCancelled: { stop.raise(.leaseLost("broadcast \(record.id) was cancelled")) })
        let feed = TargetFeed(
            pass: pass, record: record, shard: shard, access: access, batchSize: configuration.batchSize,
            markStep: Self.markStep(for: sender.inFlightLimit), sleeper: sleeper)
        let requests = BroadcastRequests(record)
        var count = 0
        await DeliveryPump(sender: sender, inFlight: inFlight, ahead: ahead, committer: committer, stop: stop).run {
            () throws(DeliveryStoreError) -> DeliveryPump.Step? in
            guard let next = try await feed.next() else { return nil }
            let token = next.target.token
            count += 1
            let seq = tracker?.dispatch(token, hasRow: next.hasRow) ?? count
            return DeliveryPump.Step(
                item: SendItem(requests.request(to: token, locale: next.target.locale), target: next.target), seq: seq,
                maybeSentBefore: next.maybeSentBefore)
        }
        // Held BadDeviceToken prunes belong to this pass's committer: the breaker released them by now or never will.
        claim.discard(sender.endRun())
        return tracker?.lastDispatched
    }

    /// Renews the claim every heartbeat. A busy or unavailable store is waited out (the claim holds until its
    /// TTL); only another worker taking the shard over stops the claim.
    private func startHeartbeat(shard: BroadcastShard, access: StoreAccess, stop: StopFlag) -> Task<Void, Never> {
        let (interval, ttl, logger) = (configuration.heartbeatMs, configuration.leaseTtlMs, logger)
        let (id, index, fence) = (shard.broadcastId, shard.index, shard.fence)
        return Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(interval))
                if Task.isCancelled { break }
                do throws(DeliveryStoreError) {
                    let held = try await access.run("renewing the claim") { store throws(DeliveryStoreError) in
                        try store.renewShard(id: id, index: index, fence: fence, ttlMs: ttl)
                    }
                    if !held { stop.raise(.leaseLost("another worker took over shard \(index) of broadcast \(id)")) }
                } catch {
                    if error.code == .leaseLost {
                        stop.raise(StopReason(error))
                    } else {
                        logger.warning("could not renew the claim of a shard; will try again", metadata: ["error": "\(error.message)"])
                    }
                }
            }
        }
    }

    /// How far ahead of what it hands out the feed writes a pass's dispatch mark: half the in-flight window. Each
    /// mark is a write transaction; at a quarter of the window (125 devices by default) they outnumbered the outcome
    /// commits, and on PostgreSQL half a window took the server's CPU per notification from 9.8 to 7.4 µs (medians
    /// of 3 interleaved 500,000-device broadcasts, bench/RESULTS.md). The price is what a resume after a
    /// crash resends: up to the mark, which leads by at most two steps, so the ahead window (twice the in-flight
    /// window) plus one in-flight window at most; of those, no more than the ahead window can really have been sent.
    static func markStep(for inFlightLimit: Int) -> Int { max(1, inFlightLimit / 2) }

    static func seconds(since start: ContinuousClock.Instant) -> Double {
        let d = ContinuousClock.now - start
        return Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }
}
