/// The storage the delivery engine (`PushDelivery`) needs, and nothing more: leases with fences, pages of
/// targets, one transaction per batch of outcomes (with prunes and the checkpoint), the end of a run, and
/// the pruning breaker's state. `PushStore` implements it on SQLite; another backend implements the same
/// operations for several processes on several hosts, so nothing here assumes one process:
/// - times (lease expiry) are the store's clock, never the caller's;
/// - every write a run makes names its lease fence and fails with ``DeliveryStoreError/Code/leaseLost``
///   once another owner has taken the lease, so a stale run can neither move a checkpoint nor record outcomes;
/// - a transient failure is ``DeliveryStoreError/Code/unavailable`` and the engine retries it.
///
/// Every method may block (it does I/O): callers run them off the cooperative thread pool.
public protocol DeliveryStore: Sendable {
    /// The broadcast with this id, or nil.
    func broadcast(id: String) throws(DeliveryStoreError) -> BroadcastRecord?

    /// Broadcasts that still have devices to send to (pending, running, interrupted), oldest first.
    func unfinishedBroadcasts() throws(DeliveryStoreError) -> [BroadcastRecord]

    /// Takes `app`'s lease for `owner` until the store's now + `ttlMs`. Another owner's lease is taken over
    /// only when it has expired or `ownerIsDead` says its process is gone.
    func acquireLease(
        app: String, broadcastId: String, owner: String, ttlMs: Int64, ownerIsDead: @Sendable (String) -> Bool
    ) throws(DeliveryStoreError) -> LeaseResult

    /// Extends the lease held under `fence`; false when another owner has taken it.
    func renewLease(app: String, fence: Int64, ttlMs: Int64) throws(DeliveryStoreError) -> Bool

    /// Gives the lease up, if `fence` still holds it.
    func releaseLease(app: String, fence: Int64) throws(DeliveryStoreError)

    /// Starts a run under `fence`: state running, the run number incremented, `total` counted if never
    /// counted. Returns the record as the run sees it.
    func beginRun(id: String, fence: Int64) throws(DeliveryStoreError) -> BroadcastRecord

    /// One keyset page of the main pass: the targeted devices after `after` (hex), in token order.
    func targets(of record: BroadcastRecord, after: String, limit: Int) throws(DeliveryStoreError) -> [DeliveryTarget]

    /// One keyset page of `app`'s registered devices after `after` (hex), optionally in `channel` and/or
    /// `environment`, in token order (`pushctl send --all` / `--channel`).
    func devices(app: String, channel: String?, environment: APNsEnvironment?, after: String, limit: Int)
        throws(DeliveryStoreError) -> [DeliveryTarget]

    /// Outcomes already stored for tokens in (`after`, `through`], by token hex (a resumed main pass skips
    /// final ones).
    func storedOutcomes(id: String, after: String, through: String) throws(DeliveryStoreError) -> [String: StoredOutcome]

    /// One keyset page of the retry pass: tokens after `after` whose outcome is deferred by a run before `run`.
    func deferredTargets(id: String, beforeRun run: Int, after: String, limit: Int)
        throws(DeliveryStoreError) -> [(target: DeliveryTarget, previous: StoredOutcome)]

    /// Records, before they are sent, that the pass's tokens up to `through` may be handed to the sender.
    func markDispatched(id: String, fence: Int64, pass: DeliveryPass, run: Int, through: String) throws(DeliveryStoreError)

    /// Writes a batch in one transaction (see ``OutcomeBatch``) and says what it pruned.
    func commit(_ batch: OutcomeBatch) throws(DeliveryStoreError) -> CommitReceipt

    /// Ends a run under `fence`: the new state and error; on completion `total` becomes the number of devices
    /// with an outcome. `settledDispatched`, after a graceful stop, lowers the main-pass dispatch mark to
    /// what was really handed over.
    func finishRun(id: String, fence: Int64, state: BroadcastState, error: String?, settledDispatched: String?)
        throws(DeliveryStoreError)

    /// Records why a broadcast could not start (e.g. unreadable credentials); it stays resumable.
    func noteUnstartable(id: String, error: String) throws(DeliveryStoreError)

    /// Totals over the broadcast's committed outcomes.
    func counts(id: String) throws(DeliveryStoreError) -> BroadcastCounts

    /// The persisted pruning-breaker state of each of `app`'s endpoints (keyed by endpoint URL).
    func breakerStates(app: String) throws(DeliveryStoreError) -> [String: PruningBreaker.State]

    /// Persists the pruning-breaker state of `app`'s endpoints.
    func saveBreakerStates(app: String, _ states: [String: PruningBreaker.State]) throws(DeliveryStoreError)
}

/// An outcome a broadcast already holds for a token.
public struct StoredOutcome: Sendable, Equatable {
    /// Its kind.
    public var kind: DeliveryOutcome.Kind
    /// Whether it may have reached the device already.
    public var possiblyDuplicated: Bool
    /// The run that wrote it.
    public var run: Int

    /// Creates one.
    public init(kind: DeliveryOutcome.Kind, possiblyDuplicated: Bool, run: Int) {
        self.kind = kind
        self.possiblyDuplicated = possiblyDuplicated
        self.run = run
    }
}
