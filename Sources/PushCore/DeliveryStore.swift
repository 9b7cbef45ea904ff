/// The storage the delivery engine (`PushDelivery`) needs, and nothing more: broadcasts split into range
/// shards claimed under fenced leases, pages of targets, one transaction per batch of outcomes (the rows of
/// devices that need action later, the job's counters, prunes and the shard's checkpoint — an accepted device
/// of a broadcast writes nothing of its own), the end of a claim, and the pruning breaker's state. `PushStore` implements it on SQLite; another backend implements the same
/// operations for several processes on several hosts, so nothing here assumes one process:
/// - times (lease expiry) are the store's clock, never the caller's;
/// - every write a claim makes names its shard's fence and fails with ``DeliveryStoreError/Code/leaseLost``
///   once another owner has taken the lease, so a stale run can neither move a checkpoint nor record outcomes;
/// - a transient failure is ``DeliveryStoreError/Code/unavailable`` and the engine retries it.
///
/// Every method but ``perform(_:)`` and ``waitForWork(timeoutMs:)`` blocks (it does I/O), so each is `noasync`:
/// async callers hand them to ``perform(_:)``, which runs them on the store's bounded thread pool.
public protocol DeliveryStore: Sendable {
    /// Runs `body` — blocking calls on this store — on the store's own bounded thread pool, so an async caller
    /// never blocks a cooperative thread. Nil when no thread of the pool was free in time (then `body` did not
    /// run); callers treat that as the store being unavailable.
    func perform<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T?

    /// The broadcast with this id, or nil.
    @available(*, noasync, message: "blocks on the database: use perform { } from async code")
    func broadcast(id: String) throws(DeliveryStoreError) -> BroadcastRecord?

    /// Broadcasts that still have devices to send to (pending — scheduled ones too, whatever their time —,
    /// running, interrupted), oldest first.
    @available(*, noasync, message: "blocks on the database: use perform { } from async code")
    func unfinishedBroadcasts() throws(DeliveryStoreError) -> [BroadcastRecord]

    /// Now on the store's clock (ms since 1970): a scheduled job is due once this reaches its time, so every
    /// process on every host agrees when it fires.
    @available(*, noasync, message: "blocks on the database: use perform { } from async code")
    func clockMs() throws(DeliveryStoreError) -> Int64

    /// Makes broadcast `id` workable: a pending one is counted and split into shards of about `shardSize`
    /// devices and becomes running; an interrupted one becomes running again, and its shards given back after
    /// a failure are claimable at once. With `newRound`, a completed one
    /// starts a new round (its shards reopen, and their devices deferred by earlier rounds are retried).
    /// Returns the record.
    @available(*, noasync, message: "blocks on the database: use perform { } from async code")
    func startBroadcast(id: String, shardSize: Int, newRound: Bool) throws(DeliveryStoreError) -> BroadcastRecord

    /// Claims one shard for `owner` until the store's now + `ttlMs`, under a new fence and run number: a
    /// pending one whose retry time has come, or one whose claim expired or whose owner `ownerIsDead` says is
    /// gone. Only shards of broadcast `broadcastId` if set, of `apps` if set. Claims never wait on each other
    /// (PostgreSQL: `FOR UPDATE SKIP LOCKED`). Nil when none is claimable now.
    @available(*, noasync, message: "blocks on the database: use perform { } from async code")
    func claimShard(
        broadcastId: String?, apps: [String]?, owner: String, ttlMs: Int64, ownerIsDead: @Sendable (String) -> Bool
    ) throws(DeliveryStoreError) -> BroadcastShard?

    /// Extends the claim held under `fence`; false when another owner has taken the shard.
    @available(*, noasync, message: "blocks on the database: use perform { } from async code")
    func renewShard(id: String, index: Int, fence: Int64, ttlMs: Int64) throws(DeliveryStoreError) -> Bool

    /// Ends the claim held under `fence` (see ``ShardEnd``). The last shard finished completes the broadcast
    /// (`total` becomes its counted devices, ``BroadcastCounts/done``); a shard given back while no other live
    /// claim works on the broadcast makes it interrupted. Returns the broadcast's state after.
    @available(*, noasync, message: "blocks on the database: use perform { } from async code")
    func finishShard(id: String, index: Int, fence: Int64, end: ShardEnd) throws(DeliveryStoreError) -> BroadcastState

    /// Waits (without blocking a thread) until shards may have become claimable or a broadcast finished (another process's notice, where
    /// the backend has them: PostgreSQL `LISTEN`/`NOTIFY`) or `timeoutMs` pass. Callers wait in a loop and
    /// poll, so a missed notice only delays.
    func waitForWork(timeoutMs: Int) async

    /// The broadcast's shards in key order.
    @available(*, noasync, message: "blocks on the database: use perform { } from async code")
    func shards(id: String) throws(DeliveryStoreError) -> [BroadcastShard]

    /// Notifications each worker settled for the broadcast (counted in its commits: accepted devices the checkpoint
    /// passed, the other outcomes but pending markers; a deferred device retried counts again), by owner.
    @available(*, noasync, message: "blocks on the database: use perform { } from async code")
    func workers(id: String) throws(DeliveryStoreError) -> [String: Int]

    /// One keyset page of the main pass: the targeted devices in (`after`, `through`] (hex), in token order.
    @available(*, noasync, message: "blocks on the database: use perform { } from async code")
    func targets(of record: BroadcastRecord, after: String, through: String, limit: Int) throws(DeliveryStoreError) -> [DeliveryTarget]

    /// One keyset page of `app`'s registered devices after `after` (hex), optionally in `channel` and/or
    /// `environment`, in token order (`pushctl send --all` / `--channel`).
    @available(*, noasync, message: "blocks on the database: use perform { } from async code")
    func devices(app: String, channel: String?, environment: APNsEnvironment?, after: String, limit: Int)
        throws(DeliveryStoreError) -> [DeliveryTarget]

    /// Rows stored for tokens in (`after`, `through`], by token hex: dead tokens, rejections, deferrals and pending
    /// devices (and accepted ones written before the lean ledger). A resumed main pass skips all but pending ones.
    @available(*, noasync, message: "blocks on the database: use perform { } from async code")
    func storedOutcomes(id: String, after: String, through: String) throws(DeliveryStoreError) -> [String: StoredOutcome]

    /// One keyset page of the retry pass: tokens in (`after`, `through`] whose row is deferred, or pending (left
    /// by a claim that stopped or died while they waited), by a run before `run`.
    @available(*, noasync, message: "blocks on the database: use perform { } from async code")
    func deferredTargets(id: String, beforeRun run: Int, after: String, through: String, limit: Int)
        throws(DeliveryStoreError) -> [(target: DeliveryTarget, previous: StoredOutcome)]

    /// Records, before they are sent, that the pass's tokens of shard `index` up to `through` may be handed
    /// to the sender.
    @available(*, noasync, message: "blocks on the database: use perform { } from async code")
    func markDispatched(id: String, index: Int, fence: Int64, pass: DeliveryPass, run: Int, through: String)
        throws(DeliveryStoreError)

    /// Writes a batch in one transaction (see ``OutcomeBatch``) and says what it pruned. The counters: accepted
    /// devices as the batch's tally says; every other outcome but a pending one with its row, uncounting the row it
    /// replaces (an accepted outcome that ``DeliveryOutcome/mayHaveRow`` removes its device's row).
    @available(*, noasync, message: "blocks on the database: use perform { } from async code")
    func commit(_ batch: OutcomeBatch) throws(DeliveryStoreError) -> CommitReceipt

    /// Records why a broadcast could not start (e.g. unreadable credentials) or why a run stopped holding no shard
    /// (a signal between two claims): it becomes interrupted — unless it finished, was cancelled, or another
    /// worker's claim is live (then it is still running) — so its status never says running while nothing runs.
    /// It stays resumable.
    @available(*, noasync, message: "blocks on the database: use perform { } from async code")
    func noteStopped(id: String, error: String) throws(DeliveryStoreError)

    /// The broadcast's counters (exact, kept through resumes and history retention).
    @available(*, noasync, message: "blocks on the database: use perform { } from async code")
    func counts(id: String) throws(DeliveryStoreError) -> BroadcastCounts

    /// The persisted pruning-breaker state of each of `app`'s endpoints (keyed by endpoint URL).
    @available(*, noasync, message: "blocks on the database: use perform { } from async code")
    func breakerStates(app: String) throws(DeliveryStoreError) -> [String: PruningBreaker.State]

    /// Persists the pruning-breaker state of `app`'s endpoints.
    @available(*, noasync, message: "blocks on the database: use perform { } from async code")
    func saveBreakerStates(app: String, _ states: [String: PruningBreaker.State]) throws(DeliveryStoreError)

    /// Leases up to `limit` of `app`'s outbox events that are due (oldest first) until the store's now +
    /// `leaseMs`: no other process takes them meanwhile (PostgreSQL: `FOR UPDATE SKIP LOCKED`).
    @available(*, noasync, message: "blocks on the database: use perform { } from async code")
    func claimWebhookEvents(app: String, limit: Int, leaseMs: Int64) throws(DeliveryStoreError) -> [WebhookEvent]

    /// Removes delivered events from the outbox.
    @available(*, noasync, message: "blocks on the database: use perform { } from async code")
    func deleteWebhookEvents(ids: [Int64]) throws(DeliveryStoreError)

    /// Counts a failed attempt on each event and makes them due again `afterMs` from the store's now.
    @available(*, noasync, message: "blocks on the database: use perform { } from async code")
    func retryWebhookEvents(ids: [Int64], afterMs: Int64) throws(DeliveryStoreError)

    /// Events of `app` waiting in the outbox.
    @available(*, noasync, message: "blocks on the database: use perform { } from async code")
    func webhookBacklog(app: String) throws(DeliveryStoreError) -> Int

    /// Stores broadcast `id`'s rate (`--rate`): at most `perSecond` notifications a second over every process
    /// working on it. Nil removes it.
    @available(*, noasync, message: "blocks on the database: use perform { } from async code")
    func setRate(id: String, perSecond: Double?) throws(DeliveryStoreError)

    /// Reserves `count` of broadcast `id`'s notifications under its stored rate (see ``Pacer``); a negative
    /// count gives unsent ones back. Nil when the broadcast has no rate.
    @available(*, noasync, message: "blocks on the database: use perform { } from async code")
    func reserveSends(id: String, count: Int) throws(DeliveryStoreError) -> RateReservation?
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
