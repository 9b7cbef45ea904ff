import Foundation
import PushCore

/// What a registry backend implements so ``BackendDeliveryStore`` can offer it to the delivery engine as a
/// ``DeliveryStore``: the same operations in the registry's own error type.
protocol DeliveryBackend: Sendable {
    func broadcast(id: String) throws(StoreError) -> BroadcastRecord?
    func broadcasts(app: String?, states: [BroadcastState]) throws(StoreError) -> [BroadcastRecord]
    func startBroadcast(id: String, shardSize: Int, newRound: Bool) throws(StoreError) -> BroadcastRecord
    func claimShard(broadcastId: String?, apps: [String]?, owner: String, ttlMs: Int64, ownerIsDead: (String) -> Bool)
        throws(StoreError) -> BroadcastShard?
    func renewShard(id: String, index: Int, fence: Int64, ttlMs: Int64) throws(StoreError) -> Bool
    func finishShard(id: String, index: Int, fence: Int64, end: ShardEnd) throws(StoreError) -> BroadcastState
    func shards(id: String) throws(StoreError) -> [BroadcastShard]
    func workers(id: String) throws(StoreError) -> [String: Int]
    func waitForWork(timeoutMs: Int)
    func explicitTargets(id: String, after: String, through: String, limit: Int) throws(StoreError) -> [DeliveryTarget]
    func targetPage(app: String, channel: String?, environment: APNsEnvironment?, after: String, through: String, limit: Int)
        throws(StoreError) -> [DeliveryTarget]
    func storedOutcomes(id: String, after: String, through: String) throws(StoreError) -> [String: StoredOutcome]
    func deferredTargets(id: String, beforeRun run: Int, after: String, through: String, limit: Int)
        throws(StoreError) -> [(target: DeliveryTarget, previous: StoredOutcome)]
    func markDispatched(id: String, index: Int, fence: Int64, pass: DeliveryPass, run: Int, through: String) throws(StoreError)
    func commit(_ batch: OutcomeBatch) throws(StoreError) -> CommitReceipt
    func noteUnstartable(id: String, error: String) throws(StoreError)
    func broadcastCounts(id: String) throws(StoreError) -> BroadcastCounts
    func breakerStates(app: String) throws(StoreError) -> [String: PruningBreaker.State]
    func saveBreakerStates(app: String, _ states: [String: PruningBreaker.State]) throws(StoreError)
    func clockMs() throws(StoreError) -> Int64
    func claimWebhookEvents(app: String, limit: Int, leaseMs: Int64) throws(StoreError) -> [WebhookEvent]
    func deleteWebhookEvents(ids: [Int64]) throws(StoreError)
    func retryWebhookEvents(ids: [Int64], afterMs: Int64) throws(StoreError)
    func webhookBacklog(app: String) throws(StoreError) -> Int
    func setRate(id: String, perSecond: Double?) throws(StoreError)
    func reserveSends(id: String, count: Int) throws(StoreError) -> RateReservation?
}

extension SQLiteRegistry: DeliveryBackend {
    /// SQLite has no notices between processes: waiting is polling.
    func waitForWork(timeoutMs: Int) { Thread.sleep(forTimeInterval: Double(max(1, timeoutMs)) / 1000) }
}

extension PostgresRegistry: DeliveryBackend {
    func waitForWork(timeoutMs: Int) { wakeups.wait(timeoutMs: timeoutMs) }
}

/// The delivery engine's storage (``DeliveryStore``) on a registry backend. Every write of a claim checks the
/// shard's fence inside its transaction; times come from the backend's clock. Failures are translated
/// into the engine's terms: busy/locked databases, lost connections and I/O errors are transient
/// (``DeliveryStoreError/Code/unavailable``), a stale fence is ``DeliveryStoreError/Code/leaseLost``.
struct BackendDeliveryStore<Backend: DeliveryBackend>: DeliveryStore {
    let backend: Backend

    init(_ backend: Backend) { self.backend = backend }

    func broadcast(id: String) throws(DeliveryStoreError) -> BroadcastRecord? {
        try mapped { () throws(StoreError) in try backend.broadcast(id: id) }
    }

    func unfinishedBroadcasts() throws(DeliveryStoreError) -> [BroadcastRecord] {
        try mapped { () throws(StoreError) in try backend.broadcasts(app: nil, states: [.pending, .running, .interrupted, .failed]) }
    }

    func claimWebhookEvents(app: String, limit: Int, leaseMs: Int64) throws(DeliveryStoreError) -> [WebhookEvent] {
        try mapped { () throws(StoreError) in try backend.claimWebhookEvents(app: app, limit: limit, leaseMs: leaseMs) }
    }

    func deleteWebhookEvents(ids: [Int64]) throws(DeliveryStoreError) {
        try mapped { () throws(StoreError) in try backend.deleteWebhookEvents(ids: ids) }
    }

    func retryWebhookEvents(ids: [Int64], afterMs: Int64) throws(DeliveryStoreError) {
        try mapped { () throws(StoreError) in try backend.retryWebhookEvents(ids: ids, afterMs: afterMs) }
    }

    func webhookBacklog(app: String) throws(DeliveryStoreError) -> Int {
        try mapped { () throws(StoreError) in try backend.webhookBacklog(app: app) }
    }

    func clockMs() throws(DeliveryStoreError) -> Int64 {
        try mapped { () throws(StoreError) in try backend.clockMs() }
    }

    func startBroadcast(id: String, shardSize: Int, newRound: Bool) throws(DeliveryStoreError) -> BroadcastRecord {
        try mapped { () throws(StoreError) in try backend.startBroadcast(id: id, shardSize: shardSize, newRound: newRound) }
    }

    func claimShard(
        broadcastId: String?, apps: [String]?, owner: String, ttlMs: Int64, ownerIsDead: @Sendable (String) -> Bool
    ) throws(DeliveryStoreError) -> BroadcastShard? {
        try mapped { () throws(StoreError) in
            try backend.claimShard(broadcastId: broadcastId, apps: apps, owner: owner, ttlMs: ttlMs, ownerIsDead: ownerIsDead)
        }
    }

    func renewShard(id: String, index: Int, fence: Int64, ttlMs: Int64) throws(DeliveryStoreError) -> Bool {
        try mapped { () throws(StoreError) in try backend.renewShard(id: id, index: index, fence: fence, ttlMs: ttlMs) }
    }

    func finishShard(id: String, index: Int, fence: Int64, end: ShardEnd) throws(DeliveryStoreError) -> BroadcastState {
        try mapped { () throws(StoreError) in try backend.finishShard(id: id, index: index, fence: fence, end: end) }
    }

    func shards(id: String) throws(DeliveryStoreError) -> [BroadcastShard] {
        try mapped { () throws(StoreError) in try backend.shards(id: id) }
    }

    func workers(id: String) throws(DeliveryStoreError) -> [String: Int] {
        try mapped { () throws(StoreError) in try backend.workers(id: id) }
    }

    func waitForWork(timeoutMs: Int) { backend.waitForWork(timeoutMs: timeoutMs) }

    func targets(of record: BroadcastRecord, after: String, through: String, limit: Int) throws(DeliveryStoreError) -> [DeliveryTarget] {
        try mapped { () throws(StoreError) in
            if record.explicitTokens { return try backend.explicitTargets(id: record.id, after: after, through: through, limit: limit) }
            return try backend.targetPage(
                app: record.app, channel: record.channel, environment: record.environment, after: after, through: through, limit: limit)
        }
    }

    func devices(app: String, channel: String?, environment: APNsEnvironment?, after: String, limit: Int)
        throws(DeliveryStoreError) -> [DeliveryTarget]
    {
        try mapped { () throws(StoreError) in
            try backend.targetPage(
                app: app, channel: channel, environment: environment, after: after, through: BroadcastShard.keySpaceEnd, limit: limit)
        }
    }

    func storedOutcomes(id: String, after: String, through: String) throws(DeliveryStoreError) -> [String: StoredOutcome] {
        try mapped { () throws(StoreError) in try backend.storedOutcomes(id: id, after: after, through: through) }
    }

    func deferredTargets(id: String, beforeRun run: Int, after: String, through: String, limit: Int)
        throws(DeliveryStoreError) -> [(target: DeliveryTarget, previous: StoredOutcome)]
    {
        try mapped { () throws(StoreError) in
            try backend.deferredTargets(id: id, beforeRun: run, after: after, through: through, limit: limit)
        }
    }

    func markDispatched(id: String, index: Int, fence: Int64, pass: DeliveryPass, run: Int, through: String)
        throws(DeliveryStoreError)
    {
        try mapped { () throws(StoreError) in
            try backend.markDispatched(id: id, index: index, fence: fence, pass: pass, run: run, through: through)
        }
    }

    func commit(_ batch: OutcomeBatch) throws(DeliveryStoreError) -> CommitReceipt {
        try mapped { () throws(StoreError) in try backend.commit(batch) }
    }

    func noteUnstartable(id: String, error: String) throws(DeliveryStoreError) {
        try mapped { () throws(StoreError) in try backend.noteUnstartable(id: id, error: error) }
    }

    func counts(id: String) throws(DeliveryStoreError) -> BroadcastCounts {
        try mapped { () throws(StoreError) in try backend.broadcastCounts(id: id) }
    }

    func breakerStates(app: String) throws(DeliveryStoreError) -> [String: PruningBreaker.State] {
        try mapped { () throws(StoreError) in try backend.breakerStates(app: app) }
    }

    func saveBreakerStates(app: String, _ states: [String: PruningBreaker.State]) throws(DeliveryStoreError) {
        try mapped { () throws(StoreError) in try backend.saveBreakerStates(app: app, states) }
    }

    func setRate(id: String, perSecond: Double?) throws(DeliveryStoreError) {
        try mapped { () throws(StoreError) in try backend.setRate(id: id, perSecond: perSecond) }
    }

    func reserveSends(id: String, count: Int) throws(DeliveryStoreError) -> RateReservation? {
        try mapped { () throws(StoreError) in try backend.reserveSends(id: id, count: count) }
    }

    private func mapped<T>(_ body: () throws(StoreError) -> T) throws(DeliveryStoreError) -> T {
        do {
            return try body()
        } catch {
            switch error.code {
            case .busy, .ioError, .cannotOpen: throw DeliveryStoreError(.unavailable, error.message)
            case .leaseLost: throw DeliveryStoreError(.leaseLost, error.message)
            default: throw DeliveryStoreError(.unknown, error.message)
            }
        }
    }
}
