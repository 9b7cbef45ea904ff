import PushCore

/// What a registry backend implements so ``BackendDeliveryStore`` can offer it to the delivery engine as a
/// ``DeliveryStore``: the same operations in the registry's own error type.
protocol DeliveryBackend: Sendable {
    func broadcast(id: String) throws(StoreError) -> BroadcastRecord?
    func broadcasts(app: String?, states: [BroadcastState]) throws(StoreError) -> [BroadcastRecord]
    func acquireLease(app: String, broadcastId: String, owner: String, ttlMs: Int64, ownerIsDead: (String) -> Bool)
        throws(StoreError) -> LeaseResult
    func renewLease(app: String, fence: Int64, ttlMs: Int64) throws(StoreError) -> Bool
    func releaseLease(app: String, fence: Int64) throws(StoreError)
    func beginRun(id: String, fence: Int64) throws(StoreError) -> BroadcastRecord
    func explicitTargets(id: String, after: String, limit: Int) throws(StoreError) -> [DeliveryTarget]
    func page(app: String, channel: String?, environment: APNsEnvironment?, after: String, limit: Int)
        throws(StoreError) -> [RegisteredDevice]
    func storedOutcomes(id: String, after: String, through: String) throws(StoreError) -> [String: StoredOutcome]
    func deferredTargets(id: String, beforeRun run: Int, after: String, limit: Int)
        throws(StoreError) -> [(target: DeliveryTarget, previous: StoredOutcome)]
    func markDispatched(id: String, fence: Int64, pass: DeliveryPass, run: Int, through: String) throws(StoreError)
    func commit(_ batch: OutcomeBatch) throws(StoreError) -> CommitReceipt
    func finishRun(id: String, fence: Int64, state: BroadcastState, error: String?, settledDispatched: String?) throws(StoreError)
    func noteUnstartable(id: String, error: String) throws(StoreError)
    func broadcastCounts(id: String) throws(StoreError) -> BroadcastCounts
    func breakerStates(app: String) throws(StoreError) -> [String: PruningBreaker.State]
    func saveBreakerStates(app: String, _ states: [String: PruningBreaker.State]) throws(StoreError)
}

extension Registry: DeliveryBackend {}
extension PostgresRegistry: DeliveryBackend {}

/// The delivery engine's storage (``DeliveryStore``) on a registry backend. Every write of a run checks the
/// run's lease fence inside its transaction; times come from the backend's clock. Failures are translated
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

    func acquireLease(
        app: String, broadcastId: String, owner: String, ttlMs: Int64, ownerIsDead: @Sendable (String) -> Bool
    ) throws(DeliveryStoreError) -> LeaseResult {
        try mapped { () throws(StoreError) in
            try backend.acquireLease(app: app, broadcastId: broadcastId, owner: owner, ttlMs: ttlMs, ownerIsDead: ownerIsDead)
        }
    }

    func renewLease(app: String, fence: Int64, ttlMs: Int64) throws(DeliveryStoreError) -> Bool {
        try mapped { () throws(StoreError) in try backend.renewLease(app: app, fence: fence, ttlMs: ttlMs) }
    }

    func releaseLease(app: String, fence: Int64) throws(DeliveryStoreError) {
        try mapped { () throws(StoreError) in try backend.releaseLease(app: app, fence: fence) }
    }

    func beginRun(id: String, fence: Int64) throws(DeliveryStoreError) -> BroadcastRecord {
        try mapped { () throws(StoreError) in try backend.beginRun(id: id, fence: fence) }
    }

    func targets(of record: BroadcastRecord, after: String, limit: Int) throws(DeliveryStoreError) -> [DeliveryTarget] {
        try mapped { () throws(StoreError) in
            if record.explicitTokens { return try backend.explicitTargets(id: record.id, after: after, limit: limit) }
            return try backend.page(app: record.app, channel: record.channel, environment: record.environment, after: after, limit: limit)
                .map { DeliveryTarget(token: $0.token, environment: $0.environment) }
        }
    }

    func devices(app: String, channel: String?, environment: APNsEnvironment?, after: String, limit: Int)
        throws(DeliveryStoreError) -> [DeliveryTarget]
    {
        try mapped { () throws(StoreError) in
            try backend.page(app: app, channel: channel, environment: environment, after: after, limit: limit)
                .map { DeliveryTarget(token: $0.token, environment: $0.environment) }
        }
    }

    func storedOutcomes(id: String, after: String, through: String) throws(DeliveryStoreError) -> [String: StoredOutcome] {
        try mapped { () throws(StoreError) in try backend.storedOutcomes(id: id, after: after, through: through) }
    }

    func deferredTargets(id: String, beforeRun run: Int, after: String, limit: Int)
        throws(DeliveryStoreError) -> [(target: DeliveryTarget, previous: StoredOutcome)]
    {
        try mapped { () throws(StoreError) in try backend.deferredTargets(id: id, beforeRun: run, after: after, limit: limit) }
    }

    func markDispatched(id: String, fence: Int64, pass: DeliveryPass, run: Int, through: String) throws(DeliveryStoreError) {
        try mapped { () throws(StoreError) in try backend.markDispatched(id: id, fence: fence, pass: pass, run: run, through: through) }
    }

    func commit(_ batch: OutcomeBatch) throws(DeliveryStoreError) -> CommitReceipt {
        try mapped { () throws(StoreError) in try backend.commit(batch) }
    }

    func finishRun(id: String, fence: Int64, state: BroadcastState, error: String?, settledDispatched: String?)
        throws(DeliveryStoreError)
    {
        try mapped { () throws(StoreError) in
            try backend.finishRun(id: id, fence: fence, state: state, error: error, settledDispatched: settledDispatched)
        }
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
