import PushCore

/// The device registry and broadcast records as `pushctl serve`, `pushctl tokens` and the commands that
/// create broadcasts see them, on either backend: ``SQLiteRegistry`` (SQLite, the embedded default) or
/// ``PostgresRegistry`` (several processes on several hosts). ``RegistryConformanceTests`` runs the same
/// checks on both.
///
/// Every method blocks on I/O (a SQLite lock, a PostgreSQL round trip), so each is `noasync`: the compiler refuses
/// it in async code, which goes through ``run(_:)`` instead — the blocking calls then run on the store's
/// ``executor``, one bounded thread pool, and never on Swift's cooperative threads.
///
/// It is also the delivery engine's store: the one protocol surface of a backend is ``DeliveryStore`` (broadcast
/// records, shards, outcomes, breakers, webhooks, rates) refined here with what `pushctl serve`, `pushctl tokens`
/// and the commands see (devices, logs, history, Live Activities, channels).
public protocol RegistryStore: AnyObject, DeliveryStore {
    /// Where the registry lives, fit for messages (a file path, or a PostgreSQL URL without password).
    var location: String { get }

    /// The bounded thread pool that runs this registry's blocking calls for async callers (``run(_:)``).
    var executor: StoreExecutor { get }

    /// The schema version of the database.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    func schemaVersion() throws(StoreError) -> Int64

    /// Registers (or refreshes) `token` for `app`; with `oldToken` the old registration is replaced and its
    /// channels carried over when `channels` is nil.
    @discardableResult
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    func register(
        app: String, token: DeviceToken, oldToken: DeviceToken?, channels: [String]?, environment: APNsEnvironment?
    ) throws(StoreError) -> RegistrationOutcome

    /// Registers many requests in one transaction (group commit); each gets its own result.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    func registerBatch(_ requests: [RegistrationRequest]) -> [Result<RegistrationOutcome, StoreError>]

    /// Removes `token` from `app`; false when it was not registered.
    @discardableResult
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    func unregister(app: String, token: DeviceToken) throws(StoreError) -> Bool

    /// One device, or nil when `token` is not registered for `app`.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    func device(app: String, token: DeviceToken) throws(StoreError) -> RegisteredDevice?

    /// The installation fields of one device, or nil when `token` is not registered for `app`.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    func installation(app: String, token: DeviceToken) throws(StoreError) -> Installation?

    /// One keyset page of `user`'s devices (token > `after`), in token order, with their installation fields: a
    /// range of the user index, not a scan.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    func userDevices(app: String, user: String, after: String, limit: Int) throws(StoreError) -> [RegisteredDevice]

    /// Detaches `user` from every device of `app` (a forced log-out; the devices stay); returns how many had it.
    @discardableResult
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    func detachUser(app: String, user: String) throws(StoreError) -> Int

    /// How many devices of `app` (in `environment`, if given) are in `audience` now.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    func countAudience(app: String, environment: APNsEnvironment?, audience: Audience) throws(StoreError) -> Int

    /// The plan the database picks to read one page of `audience` (SQLite `EXPLAIN QUERY PLAN`, PostgreSQL
    /// `EXPLAIN`): what the tests assert a send to one user reads through the user index.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    func audiencePlan(app: String, audience: Audience) throws(StoreError) -> String

    /// Push-to-start tokens of `attributesType` on the installations of the devices in `audience`.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    func pushToStartTokens(app: String, attributesType: String, audience: Audience, environment: APNsEnvironment?)
        throws(StoreError) -> [DeviceToken]

    /// How many devices `app` has, optionally only those in `channel` and/or `environment`.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    func count(app: String, channel: String?, environment: APNsEnvironment?) throws(StoreError) -> Int

    /// One keyset page: devices with token > `after` (hex), in token order.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    func page(app: String, channel: String?, environment: APNsEnvironment?, after: String, limit: Int)
        throws(StoreError) -> [RegisteredDevice]

    /// One keyset page of token hex strings (export: the token column only).
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    func tokenPage(app: String, channel: String?, environment: APNsEnvironment?, after: String, limit: Int)
        throws(StoreError) -> [String]

    /// Removes a token APNs reported dead, unless (for an answer ``APNsAnswerRule`` gates on its timestamp) it
    /// registered again after APNs' timestamp; logs what was done. An answer that does not prune is `.invalidInput`.
    @discardableResult
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    func prune(app: String, token: DeviceToken, _ request: PruneRequest) throws(StoreError) -> PruneOutcome

    /// The newest prune-log entries of `app`.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    func pruneLog(app: String, limit: Int) throws(StoreError) -> [PruneLogEntry]

    /// Appends to the delivery log.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    func recordDeliveries(_ records: [DeliveryRecord]) throws(StoreError)

    /// The newest delivery-log entries of `app`.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    func recentDeliveries(app: String, limit: Int) throws(StoreError) -> [DeliveryRecord]

    /// One page of `query.app`'s delivery log, newest first (see ``DeliveryQuery``). Each filter combination
    /// reads through an index: per app, per token, per broadcast.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    func deliveries(_ query: DeliveryQuery) throws(StoreError) -> DeliveryPage

    /// Deletes history older than `cutoffMs` (ms since 1970), in transactions of at most `batchSize` rows so no
    /// writer waits long: delivery-log rows finished before it, prune-log rows logged before it, and the
    /// per-device rows (outcomes, explicit token lists) of broadcasts and send jobs *completed* before it. The
    /// broadcast records themselves (state, total, times) stay; an unfinished broadcast's rows are never
    /// deleted, whatever their age, so it can always resume.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    func trimHistory(before cutoffMs: Int64, batchSize: Int) throws(StoreError) -> RetentionReport

    /// Final delivery outcomes grouped by app, status and reason.
    /// Kept as counters in the transactions that write the log (never lowered by retention), not by scanning it.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    func deliveryCounts() throws(StoreError) -> [DeliveryCount]

    /// Prune-log entries grouped by app, reason and action; counters kept like ``deliveryCounts()``.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    func pruneCounts() throws(StoreError) -> [PruneCount]

    /// Stores a new broadcast (with `tokens`: exactly those). Fails with `.constraint` when the id exists.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    func createBroadcast(_ record: BroadcastRecord, tokens: [DeviceToken]?) throws(StoreError)

    /// Stores several new broadcasts in one transaction (a local-time job's waves): all or none.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    func createBroadcasts(_ records: [BroadcastRecord]) throws(StoreError)

    /// Broadcasts of `app` (any app when nil) in the given states, oldest first.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    func broadcasts(app: String?, states: [BroadcastState]) throws(StoreError) -> [BroadcastRecord]

    /// Cancels broadcast `id` of `app`: a pending (scheduled), running or interrupted one becomes cancelled —
    /// nothing starts or resumes it again, workers on it stop at their next lease renewal, and devices without
    /// an outcome are not sent to. A completed or already cancelled one is returned unchanged; nil when `app`
    /// has no broadcast `id`.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    func cancelBroadcast(id: String, app: String) throws(StoreError) -> BroadcastRecord?

    /// Totals over a broadcast's committed outcomes.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    func broadcastCounts(id: String) throws(StoreError) -> BroadcastCounts

    /// One keyset page of a broadcast's explicit token list in (`after`, `through`] (hex), in token order.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    func explicitTargets(id: String, after: String, through: String, limit: Int) throws(StoreError) -> [DeliveryTarget]

    /// One keyset page of `app`'s devices (optionally of `channel` and/or `environment`) in (`after`, `through`]
    /// (hex), in token order.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    func targetPage(app: String, channel: String?, environment: APNsEnvironment?, after: String, through: String, limit: Int)
        throws(StoreError) -> [DeliveryTarget]

    /// One keyset page of the devices in a broadcast's audience (its targeting: users, clauses) in (`after`,
    /// `through`] (hex), in token order, each with its locale for per-locale text.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    func audienceTargetPage(of record: BroadcastRecord, after: String, through: String, limit: Int) throws(StoreError) -> [DeliveryTarget]

    /// Writes one validated import batch in one transaction (see ``importTokens(app:lines:environment:channels:batchSize:)``).
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    func writeImportBatch(app: String, tokens: [DeviceToken], environment: APNsEnvironment, channels: [String]?)
        throws(StoreError)

    /// Runs a whole import; a backend may tune itself around it (SQLite widens its WAL checkpoints).
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    func whileImporting<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T

    /// Registers (or refreshes) a Live Activity token in one transaction. A push-to-start token replaces the
    /// installation's previous one for the same attributes type, an update token the activity's previous one
    /// (`.replaced(old)`). Throws `.invalidInput` naming the field for an invalid request.
    @discardableResult
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    func registerLiveActivityToken(_ request: LiveActivityRegistration) throws(StoreError) -> RegistrationOutcome

    /// Removes a Live Activity token; false when it was not registered.
    @discardableResult
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    func unregisterLiveActivityToken(app: String, token: DeviceToken) throws(StoreError) -> Bool

    /// Removes every update token of an activity (it ended); returns how many.
    @discardableResult
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    func endActivity(app: String, activityId: String) throws(StoreError) -> Int

    /// One keyset page of an app's Live Activity tokens matching `query`: tokens > `after` (hex), in token order.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    func liveActivityTokens(_ query: LiveActivityTokenQuery, after: String, limit: Int) throws(StoreError) -> [LiveActivityToken]

    /// Keeps a broadcast channel the app created (or updates its policy and label).
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    func saveBroadcastChannel(_ record: BroadcastChannelRecord) throws(StoreError)

    /// The app's broadcast channels, oldest first.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    func broadcastChannels(app: String) throws(StoreError) -> [BroadcastChannelRecord]

    /// Forgets a broadcast channel; false when it was not kept.
    @discardableResult
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    func deleteBroadcastChannel(app: String, environment: APNsEnvironment, channelId: String) throws(StoreError) -> Bool
}

extension RegistryStore {
    /// The delivery engine's view of the same database: the registry itself.
    public var deliveryStore: any DeliveryStore { self }

    /// Runs `body` on the store's ``executor`` (``DeliveryStore/perform(_:)``).
    public func perform<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T? { await executor.perform(body) }

    /// Broadcasts still to be worked on (``PushCore/BroadcastState/unfinished``), oldest first.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func unfinishedBroadcasts() throws(StoreError) -> [BroadcastRecord] {
        try broadcasts(app: nil, states: BroadcastState.unfinished)
    }

    /// The main pass's page: the broadcast's explicit tokens, its audience, or its app's devices in its channel and
    /// environment.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func targets(of record: BroadcastRecord, after: String, through: String, limit: Int) throws(StoreError) -> [DeliveryTarget] {
        if record.explicitTokens { return try explicitTargets(id: record.id, after: after, through: through, limit: limit) }
        if record.needsAudienceQuery { return try audienceTargetPage(of: record, after: after, through: through, limit: limit) }
        return try targetPage(
            app: record.app, channel: record.channel, environment: record.environment, after: after, through: through, limit: limit)
    }

    /// One page of `app`'s devices after `after`, to the end of the key space (`pushctl send --all`, `--channel`).
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func devices(app: String, channel: String?, environment: APNsEnvironment?, after: String, limit: Int)
        throws(StoreError) -> [DeliveryTarget]
    {
        try targetPage(app: app, channel: channel, environment: environment, after: after, through: BroadcastShard.keySpaceEnd, limit: limit)
    }

    /// The broadcast's counters (``DeliveryStore/counts(id:)``), under the registry's name.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func counts(id: String) throws(StoreError) -> BroadcastCounts { try broadcastCounts(id: id) }

    /// The async API: runs `body` — blocking calls on this registry — on the store's ``executor`` and returns its
    /// result, so an async caller never blocks a cooperative thread. Group the calls one answer needs in one
    /// `body` (one hop to the pool). Throws what `body` throws, or `.busy` (kind
    /// ``StoreError/Kind/unavailable``) when no store thread was free in time.
    public func run<T: Sendable>(_ body: @escaping @Sendable (any RegistryStore) throws -> T) async throws(StoreError) -> T {
        try await executor.run { () throws(StoreError) -> T in
            do {
                return try body(self)
            } catch let error as StoreError {
                throw error
            } catch {
                throw StoreError(.unknown(0), "\(error)")
            }
        }
    }

    /// Every Live Activity token matching `query`, in token order (paged underneath, `pageSize` at a time).
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func allLiveActivityTokens(_ query: LiveActivityTokenQuery, pageSize: Int = 5000) throws(StoreError) -> [LiveActivityToken] {
        var out: [LiveActivityToken] = []
        var after = ""
        while true {
            let page = try liveActivityTokens(query, after: after, limit: pageSize)
            out += page
            guard page.count == pageSize, let last = page.last else { return out }
            after = last.token.hex
        }
    }

    /// The default: no tuning.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func whileImporting<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T { try body() }

    /// Up to `limit` devices of `app` in key (token) order, after `after` if given.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func list(
        app: String, channel: String? = nil, environment: APNsEnvironment? = nil, limit: Int = 1000,
        after: DeviceToken? = nil
    ) throws(StoreError) -> [RegisteredDevice] {
        if let channel { try Channels.validate(channel) }
        return try page(app: app, channel: channel, environment: environment, after: after?.hex ?? "", limit: limit)
    }

    /// A keyset-paginated stream of `app`'s devices in batches of `batchSize`, in token order, starting
    /// after `after` if given: one short read per batch, no OFFSET, never all rows in memory. Devices
    /// registered while streaming appear if their token sorts after the current position.
    ///
    /// A failure ends the iteration and is kept in ``DeviceStream/error``;
    /// ``forEachBatch(app:channel:environment:batchSize:after:_:)`` throws it instead.
    public func batches(
        app: String, channel: String? = nil, environment: APNsEnvironment? = nil, batchSize: Int = 1000,
        after: DeviceToken? = nil
    ) -> DeviceStream {
        DeviceStream(
            registry: self, app: app, channel: channel, environment: environment, batchSize: max(1, batchSize),
            after: after?.hex ?? "")
    }

    /// Streams `app`'s devices batch by batch and rethrows any store error or error from `body`.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func forEachBatch(
        app: String, channel: String? = nil, environment: APNsEnvironment? = nil, batchSize: Int = 1000,
        after: DeviceToken? = nil, _ body: ([RegisteredDevice]) throws -> Void
    ) throws {
        if let channel { try Channels.validate(channel) }
        let stream = batches(app: app, channel: channel, environment: environment, batchSize: batchSize, after: after)
        for batch in stream { try body(batch) }
        if let error = stream.error { throw error }
    }

    /// Exports `app`'s tokens in key order as canonical lowercase hex, one call of `body` per token.
    /// Streams keyset pages of 5000 like ``batches(app:channel:environment:batchSize:after:)`` but reads only
    /// the token column and skips re-validating what the registry stored canonically (export speed).
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func export(
        app: String, channel: String? = nil, environment: APNsEnvironment? = nil, _ body: (String) throws -> Void
    ) throws {
        if let channel { try Channels.validate(channel) }
        var after = ""
        while true {
            let page = try tokenPage(app: app, channel: channel, environment: environment, after: after, limit: 5000)
            for hex in page { try body(hex) }
            guard page.count == 5000, let last = page.last else { return }
            after = last
        }
    }

}
