import PushCore

/// The delivery engine's storage (``DeliveryStore``) on a ``PostgresRegistry``'s database. Every write of a run
/// checks the run's lease fence inside its transaction; times come from the database's clock.
public struct PostgresDeliveryStore: DeliveryStore {
    /// The registry.
    public let registry: PostgresRegistry

    /// Wraps `registry`.
    public init(_ registry: PostgresRegistry) { self.registry = registry }

    public func broadcast(id: String) throws(DeliveryStoreError) -> BroadcastRecord? {
        try mapped { () throws(StoreError) in try registry.broadcast(id: id) }
    }

    public func unfinishedBroadcasts() throws(DeliveryStoreError) -> [BroadcastRecord] {
        try mapped { () throws(StoreError) in try registry.broadcasts(states: [.pending, .running, .interrupted, .failed]) }
    }

    public func acquireLease(
        app: String, broadcastId: String, owner: String, ttlMs: Int64, ownerIsDead: @Sendable (String) -> Bool
    ) throws(DeliveryStoreError) -> LeaseResult {
        try mapped { () throws(StoreError) in
            try registry.acquireLease(app: app, broadcastId: broadcastId, owner: owner, ttlMs: ttlMs, ownerIsDead: ownerIsDead)
        }
    }

    public func renewLease(app: String, fence: Int64, ttlMs: Int64) throws(DeliveryStoreError) -> Bool {
        try mapped { () throws(StoreError) in try registry.renewLease(app: app, fence: fence, ttlMs: ttlMs) }
    }

    public func releaseLease(app: String, fence: Int64) throws(DeliveryStoreError) {
        try mapped { () throws(StoreError) in try registry.releaseLease(app: app, fence: fence) }
    }

    public func beginRun(id: String, fence: Int64) throws(DeliveryStoreError) -> BroadcastRecord {
        try mapped { () throws(StoreError) in try registry.beginRun(id: id, fence: fence) }
    }

    public func targets(of record: BroadcastRecord, after: String, limit: Int) throws(DeliveryStoreError) -> [DeliveryTarget] {
        try mapped { () throws(StoreError) in
            if record.explicitTokens {
                return try registry.explicitTargets(id: record.id, after: after, limit: limit)
            }
            return try registry.page(
                app: record.app, channel: record.channel, environment: record.environment, after: after, limit: limit
            ).map { DeliveryTarget(token: $0.token, environment: $0.environment) }
        }
    }

    public func devices(app: String, channel: String?, environment: APNsEnvironment?, after: String, limit: Int)
        throws(DeliveryStoreError) -> [DeliveryTarget]
    {
        try mapped { () throws(StoreError) in
            try registry.page(app: app, channel: channel, environment: environment, after: after, limit: limit)
                .map { DeliveryTarget(token: $0.token, environment: $0.environment) }
        }
    }

    public func storedOutcomes(id: String, after: String, through: String) throws(DeliveryStoreError) -> [String: StoredOutcome] {
        try mapped { () throws(StoreError) in try registry.storedOutcomes(id: id, after: after, through: through) }
    }

    public func deferredTargets(id: String, beforeRun run: Int, after: String, limit: Int)
        throws(DeliveryStoreError) -> [(target: DeliveryTarget, previous: StoredOutcome)]
    {
        try mapped { () throws(StoreError) in try registry.deferredTargets(id: id, beforeRun: run, after: after, limit: limit) }
    }

    public func markDispatched(id: String, fence: Int64, pass: DeliveryPass, run: Int, through: String) throws(DeliveryStoreError) {
        try mapped { () throws(StoreError) in try registry.markDispatched(id: id, fence: fence, pass: pass, run: run, through: through) }
    }

    public func commit(_ batch: OutcomeBatch) throws(DeliveryStoreError) -> CommitReceipt {
        try mapped { () throws(StoreError) in try registry.commit(batch) }
    }

    public func finishRun(id: String, fence: Int64, state: BroadcastState, error: String?, settledDispatched: String?)
        throws(DeliveryStoreError)
    {
        try mapped { () throws(StoreError) in
            try registry.finishRun(id: id, fence: fence, state: state, error: error, settledDispatched: settledDispatched)
        }
    }

    public func noteUnstartable(id: String, error: String) throws(DeliveryStoreError) {
        try mapped { () throws(StoreError) in try registry.noteUnstartable(id: id, error: error) }
    }

    public func counts(id: String) throws(DeliveryStoreError) -> BroadcastCounts {
        try mapped { () throws(StoreError) in try registry.broadcastCounts(id: id) }
    }

    public func breakerStates(app: String) throws(DeliveryStoreError) -> [String: PruningBreaker.State] {
        try mapped { () throws(StoreError) in try registry.breakerStates(app: app) }
    }

    public func saveBreakerStates(app: String, _ states: [String: PruningBreaker.State]) throws(DeliveryStoreError) {
        try mapped { () throws(StoreError) in try registry.saveBreakerStates(app: app, states) }
    }

    /// Runs `body`, translating the registry's failures into the engine's terms: lost connections,
    /// serialization failures and lock timeouts are transient (``DeliveryStoreError/Code/unavailable``), a
    /// stale fence is ``DeliveryStoreError/Code/leaseLost``.
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
