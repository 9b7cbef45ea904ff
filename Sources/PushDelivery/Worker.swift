import Foundation
import Logging
import PushCore
import PushLanes
import Synchronization

/// `pushctl worker`: claims shards of any running broadcast or send job of its apps — started by
/// `pushctl broadcast`, the HTTP API or cron, on this host or another — and works on them, `concurrency`
/// shards at a time, until stopped. Each slot has its own sender per app (its own APNs connection). An idle
/// slot waits for a PostgreSQL notice or polls. When `stop` is raised the claims in progress drain and give
/// their shards back (claimable by others at once).
public final class Worker: Sendable {
    /// Builds a sender for an app, continuing its persisted pruning breakers.
    public typealias SenderFactory = @Sendable (_ app: String, _ breakers: [String: PruningBreaker.State]) throws -> any DeliverySender

    /// What a worker did before it stopped.
    public struct Report: Sendable, Equatable {
        /// Shards it finished.
        public var shardsFinished = 0
        /// Shards it gave back unfinished (stopped, or APNs/database failures).
        public var shardsReleased = 0
        /// Notifications with a committed outcome.
        public var sent = 0
    }

    private let store: DeliveryStore
    /// The ids of the apps worked for and how many reloads replaced them (``reload(apps:)``).
    private let served: Mutex<(apps: Set<String>, generation: Int)>
    private var apps: Set<String> { served.withLock { $0.apps } }
    private let configuration: BroadcastConfiguration
    private let concurrency: Int
    private let makeSender: SenderFactory
    private let logger: Logger
    private let report = Mutex(Report())

    /// A worker for the apps with these ids.
    public init(
        store: DeliveryStore, apps: Set<String>, configuration: BroadcastConfiguration = .init(), concurrency: Int = 1,
        logger: Logger = Logger(label: "worker"), makeSender: @escaping SenderFactory
    ) {
        self.store = store
        self.served = Mutex((apps, 0))
        self.configuration = configuration
        self.concurrency = max(1, concurrency)
        self.makeSender = makeSender
        self.logger = logger
    }

    /// Works until `stop` is raised, then drains and returns what it did.
    public func run(stop: StopFlag) async -> Report {
        logger.info("worker \(configuration.owner) started", metadata: [
            "apps": "\(apps.sorted().joined(separator: ","))", "concurrency": "\(concurrency)",
        ])
        await withTaskGroup(of: Void.self) { group in
            for slot in 0..<concurrency {
                group.addTask { await self.slot(slot, stop: stop) }
            }
        }
        let done = report.withLock { $0 }
        logger.info("worker \(configuration.owner) stopped", metadata: [
            "finished": "\(done.shardsFinished)", "released": "\(done.shardsReleased)", "sent": "\(done.sent)",
        ])
        return done
    }

    private func slot(_ slot: Int, stop: StopFlag) async {
        let access = StoreAccess(store: store, outageLimitMs: configuration.storeOutageLimitMs, logger: logger)
        var (servedApps, generation) = served.withLock { ($0.apps.sorted(), $0.generation) }
        let (owner, ttl, pollMs) = (configuration.owner, configuration.leaseTtlMs, configuration.pollMs)
        var senders: [String: any DeliverySender] = [:]
        var records: [String: BroadcastRecord] = [:]
        while !stop.isRaised {
            // Between shards (none is in flight here): after a reload, this slot's senders are rebuilt from the
            // reloaded configuration at their app's next shard, and the apps claimed are the reloaded ones.
            let now = served.withLock { ($0.apps.sorted(), $0.generation) }
            if now.1 != generation {
                (servedApps, generation) = now
                for sender in senders.values { await sender.shutdown() }
                senders.removeAll()
                records.removeAll()
            }
            let claimed: BroadcastShard?
            let apps = servedApps
            do throws(DeliveryStoreError) {
                claimed = try await access.run("claiming a shard") { store throws(DeliveryStoreError) in
                    try store.claimShard(broadcastId: nil, apps: apps, owner: owner, ttlMs: ttl, ownerIsDead: BroadcastConfiguration.ownerIsDead)
                }
            } catch {
                logger.error("cannot claim shards: \(error.message)")
                await access.waitForWork(timeoutMs: pollMs)
                continue
            }
            guard let shard = claimed else {
                // Nothing to claim: start the scheduled jobs whose time has come (one slot is enough), then wait.
                if slot == 0, await startDueJobs(apps: apps, access: access) > 0 { continue }
                await access.waitForWork(timeoutMs: pollMs)
                continue
            }
            let id = shard.broadcastId
            var record = records[id]
            if record == nil {
                // An outage is not "no such broadcast": the shard goes back with the database's error, for later.
                do throws(DeliveryStoreError) {
                    record = try await access.run("reading the broadcast") { store throws(DeliveryStoreError) in try store.broadcast(id: id) }
                } catch {
                    logger.error("cannot read broadcast \(id): \(error.message)")
                    await give(back: shard, error: "the database is unavailable: \(error.message)", access: access)
                    continue
                }
                records[id] = record
            }
            guard let record, self.apps.contains(record.app) else {
                await give(back: shard, error: "broadcast \(id) is not readable here", access: access)
                continue
            }
            let sender: any DeliverySender
            let app = record.app
            if let existing = senders[app] {
                sender = existing
            } else {
                // A sender never starts without its app's persisted breakers: an outage here gives the shard back
                // rather than starting with every breaker reset.
                let breakers: [String: PruningBreaker.State]
                do throws(DeliveryStoreError) {
                    breakers = try await access.run("reading the pruning breaker") { store throws(DeliveryStoreError) in
                        try store.breakerStates(app: app)
                    }
                } catch {
                    logger.error("cannot read the pruning breaker of \(app): \(error.message)")
                    await give(back: shard, error: "the database is unavailable: \(error.message)", access: access)
                    continue
                }
                do {
                    // Reading and decrypting credentials blocks: on the process's lane, never a cooperative thread.
                    let makeSender = self.makeSender
                    sender = try await BlockingLane.shared.run { try makeSender(app, breakers) }
                    senders[app] = sender
                } catch {
                    logger.error("cannot send for \(record.app): \(error)")
                    await give(back: shard, error: "credentials: \(error)", access: access)
                    continue
                }
            }
            let broadcaster = Broadcaster(store: store, configuration: configuration, logger: logger)
            let live = LiveProgress(total: 0, doneBefore: 0)
            let result = await broadcaster.work(on: shard, of: record, sender: sender, stop: stop, live: live)
            let sent = live.snapshot.done
            report.withLock { r in
                r.sent += sent
                if result.stop == nil { r.shardsFinished += 1 } else { r.shardsReleased += 1 }
            }
            logger.info(
                "shard \(shard.index) of broadcast \(id) \(result.stop == nil ? "finished" : "given back: \(result.stop!.description)")",
                metadata: ["slot": "\(slot)", "sent": "\(sent)", "run": "\(shard.run)"])
            if case .endpoint(let endpointStop) = result.stop, endpointStop.kind == .credentials {
                // Read the credentials files again for the next shard of this app.
                await senders.removeValue(forKey: record.app)?.shutdown()
            }
            let states = sender.breakerStates
            do throws(DeliveryStoreError) {
                try await access.run("saving the pruning breaker", retry: false) { store throws(DeliveryStoreError) in
                    try store.saveBreakerStates(app: app, states)
                }
            } catch {
                // Saved again after the next shard of the app; until then another process starts from the last save.
                logger.warning("cannot save the pruning breaker of \(app): \(error.message)")
            }
        }
        for sender in senders.values { await sender.shutdown() }
    }

    /// Applies a reloaded configuration: the apps worked for become `apps`, and each slot replaces its senders
    /// before its next shard (a shard in flight finishes on the sender it started with, old credentials included),
    /// so new connections use the credentials read at the reload.
    public func reload(apps: Set<String>) {
        served.withLock { $0 = (apps, $0.generation + 1) }
    }

    /// Starts (splits into shards) the scheduled broadcasts and send jobs of `apps` that are due on the store's
    /// clock; returns how many. Several workers may start the same one: starting is idempotent.
    private func startDueJobs(apps: [String], access: StoreAccess) async -> Int {
        let unfinished: [BroadcastRecord], now: Int64
        do throws(DeliveryStoreError) {
            (unfinished, now) = try await access.run("reading scheduled jobs", retry: false) { store throws(DeliveryStoreError) in
                (try store.unfinishedBroadcasts(), try store.clockMs())
            }
        } catch {
            logger.warning("cannot read scheduled jobs: \(error.message)")
            return 0
        }
        let shardSize = configuration.shardSize
        var started = 0
        for record in unfinished
        where record.state == .pending && record.scheduledMs != nil && record.isDue(atMs: now) && self.apps.contains(record.app) {
            let id = record.id
            do throws(DeliveryStoreError) {
                let running = try await access.run("starting scheduled job \(id)", retry: false) { store throws(DeliveryStoreError) in
                    try store.startBroadcast(id: id, shardSize: shardSize, newRound: false)
                }
                logger.info("started scheduled job \(id): \(running.total) devices", metadata: ["app": "\(record.app)"])
                started += 1
            } catch {
                logger.error("cannot start scheduled job \(id): \(error.message)")
            }
        }
        return started
    }

    /// Gives a claimed shard back unworked, claimable again after the retry delay.
    private func give(back shard: BroadcastShard, error: String, access: StoreAccess) async {
        let retryMs = configuration.shardRetryMs
        let (id, index, fence) = (shard.broadcastId, shard.index, shard.fence)
        do throws(DeliveryStoreError) {
            _ = try await access.run("giving shard \(index) back") { store throws(DeliveryStoreError) in
                try store.finishShard(
                    id: id, index: index, fence: fence,
                    end: .released(error: error, retryAfterMs: retryMs, mainDone: shard.mainDone, settledDispatched: nil))
            }
        } catch {
            // Its lease expires instead, and then any worker takes it over.
            logger.warning("cannot give shard \(index) of broadcast \(id) back: \(error.message)")
        }
        report.withLock { $0.shardsReleased += 1 }
    }
}
