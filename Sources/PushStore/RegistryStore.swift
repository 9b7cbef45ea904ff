import PushCore

/// The device registry and broadcast records as `pushctl serve`, `pushctl tokens` and the commands that
/// create broadcasts see them, on either backend: ``SQLiteRegistry`` (SQLite, the embedded default) or
/// ``PostgresRegistry`` (several processes on several hosts). ``RegistryConformanceTests`` runs the same
/// checks on both.
///
/// Every method may block on I/O: call them off Swift's cooperative thread pool where that matters.
public protocol RegistryStore: AnyObject, Sendable {
    /// Where the registry lives, fit for messages (a file path, or a PostgreSQL URL without password).
    var location: String { get }

    /// The delivery engine's view of the same database.
    var deliveryStore: any DeliveryStore { get }

    /// The schema version of the database.
    func schemaVersion() throws(StoreError) -> Int64

    /// Registers (or refreshes) `token` for `app`; with `oldToken` the old registration is replaced and its
    /// channels carried over when `channels` is nil.
    @discardableResult
    func register(
        app: String, token: DeviceToken, oldToken: DeviceToken?, channels: [String]?, environment: APNsEnvironment?
    ) throws(StoreError) -> RegistrationOutcome

    /// Registers many requests in one transaction (group commit); each gets its own result.
    func registerBatch(_ requests: [RegistrationRequest]) -> [Result<RegistrationOutcome, StoreError>]

    /// Removes `token` from `app`; false when it was not registered.
    @discardableResult
    func unregister(app: String, token: DeviceToken) throws(StoreError) -> Bool

    /// One device, or nil when `token` is not registered for `app`.
    func device(app: String, token: DeviceToken) throws(StoreError) -> RegisteredDevice?

    /// How many devices `app` has, optionally only those in `channel` and/or `environment`.
    func count(app: String, channel: String?, environment: APNsEnvironment?) throws(StoreError) -> Int

    /// One keyset page: devices with token > `after` (hex), in token order.
    func page(app: String, channel: String?, environment: APNsEnvironment?, after: String, limit: Int)
        throws(StoreError) -> [RegisteredDevice]

    /// One keyset page of token hex strings (export: the token column only).
    func tokenPage(app: String, channel: String?, environment: APNsEnvironment?, after: String, limit: Int)
        throws(StoreError) -> [String]

    /// Removes a token APNs reported dead, unless (for Unregistered/ExpiredToken) it registered again after
    /// APNs' timestamp; logs what was done.
    @discardableResult
    func prune(app: String, token: DeviceToken, reason: APNsReason, apnsTimestampMs: Int64?) throws(StoreError) -> PruneOutcome

    /// The newest prune-log entries of `app`.
    func pruneLog(app: String, limit: Int) throws(StoreError) -> [PruneLogEntry]

    /// Appends to the delivery log.
    func recordDeliveries(_ records: [DeliveryRecord]) throws(StoreError)

    /// The newest delivery-log entries of `app`.
    func recentDeliveries(app: String, limit: Int) throws(StoreError) -> [DeliveryRecord]

    /// One page of `query.app`'s delivery log, newest first (see ``DeliveryQuery``). Each filter combination
    /// reads through an index: per app, per token, per broadcast.
    func deliveries(_ query: DeliveryQuery) throws(StoreError) -> DeliveryPage

    /// Deletes history older than `cutoffMs` (ms since 1970), in transactions of at most `batchSize` rows so no
    /// writer waits long: delivery-log rows finished before it, prune-log rows logged before it, and the
    /// per-device rows (outcomes, explicit token lists) of broadcasts and send jobs *completed* before it. The
    /// broadcast records themselves (state, total, times) stay; an unfinished broadcast's rows are never
    /// deleted, whatever their age, so it can always resume.
    func trimHistory(before cutoffMs: Int64, batchSize: Int) throws(StoreError) -> RetentionReport

    /// Final delivery outcomes grouped by app, status and reason.
    /// Kept as counters in the transactions that write the log (never lowered by retention), not by scanning it.
    func deliveryCounts() throws(StoreError) -> [DeliveryCount]

    /// Prune-log entries grouped by app, reason and action; counters kept like ``deliveryCounts()``.
    func pruneCounts() throws(StoreError) -> [PruneCount]

    /// Stores a new broadcast (with `tokens`: exactly those). Fails with `.constraint` when the id exists.
    func createBroadcast(_ record: BroadcastRecord, tokens: [DeviceToken]?) throws(StoreError)

    /// The broadcast with this id, or nil.
    func broadcast(id: String) throws(StoreError) -> BroadcastRecord?

    /// Broadcasts of `app` (any app when nil) in the given states, oldest first.
    func broadcasts(app: String?, states: [BroadcastState]) throws(StoreError) -> [BroadcastRecord]

    /// Cancels broadcast `id` of `app`: a pending (scheduled), running or interrupted one becomes cancelled —
    /// nothing starts or resumes it again, workers on it stop at their next lease renewal, and devices without
    /// an outcome are not sent to. A completed or already cancelled one is returned unchanged; nil when `app`
    /// has no broadcast `id`.
    func cancelBroadcast(id: String, app: String) throws(StoreError) -> BroadcastRecord?

    /// Now on the store's clock (ms since 1970; PostgreSQL: the database's).
    func clockMs() throws(StoreError) -> Int64

    /// Totals over a broadcast's committed outcomes.
    func broadcastCounts(id: String) throws(StoreError) -> BroadcastCounts

    /// The persisted pruning-breaker state of `app`'s endpoints.
    func breakerStates(app: String) throws(StoreError) -> [String: PruningBreaker.State]

    /// Persists the pruning-breaker state of `app`'s endpoints.
    func saveBreakerStates(app: String, _ states: [String: PruningBreaker.State]) throws(StoreError)

    /// Writes one validated import batch in one transaction (see ``importTokens(app:lines:environment:channels:batchSize:)``).
    func writeImportBatch(app: String, tokens: [DeviceToken], environment: APNsEnvironment, channels: [String]?)
        throws(StoreError)

    /// Runs a whole import; a backend may tune itself around it (SQLite widens its WAL checkpoints).
    func whileImporting<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T

    /// Registers (or refreshes) a Live Activity token in one transaction. A push-to-start token replaces the
    /// installation's previous one for the same attributes type, an update token the activity's previous one
    /// (`.replaced(old)`). Throws `.invalidInput` naming the field for an invalid request.
    @discardableResult
    func registerLiveActivityToken(_ request: LiveActivityRegistration) throws(StoreError) -> RegistrationOutcome

    /// Removes a Live Activity token; false when it was not registered.
    @discardableResult
    func unregisterLiveActivityToken(app: String, token: DeviceToken) throws(StoreError) -> Bool

    /// Removes every update token of an activity (it ended); returns how many.
    @discardableResult
    func endActivity(app: String, activityId: String) throws(StoreError) -> Int

    /// One keyset page of an app's Live Activity tokens matching `query`: tokens > `after` (hex), in token order.
    func liveActivityTokens(_ query: LiveActivityTokenQuery, after: String, limit: Int) throws(StoreError) -> [LiveActivityToken]

    /// Keeps a broadcast channel the app created (or updates its policy and label).
    func saveBroadcastChannel(_ record: BroadcastChannelRecord) throws(StoreError)

    /// The app's broadcast channels, oldest first.
    func broadcastChannels(app: String) throws(StoreError) -> [BroadcastChannelRecord]

    /// Forgets a broadcast channel; false when it was not kept.
    @discardableResult
    func deleteBroadcastChannel(app: String, environment: APNsEnvironment, channelId: String) throws(StoreError) -> Bool
}

extension RegistryStore {
    /// Every Live Activity token matching `query`, in token order (paged underneath, `pageSize` at a time).
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
    public func whileImporting<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T { try body() }

    /// Up to `limit` devices of `app` in key (token) order, after `after` if given.
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
