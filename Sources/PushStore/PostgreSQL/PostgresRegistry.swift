import Foundation
import Logging
import PostgresNIO
import PushCore

/// The registry on PostgreSQL: the same tables and meaning as ``SQLiteRegistry`` on SQLite, for several
/// `pushctl serve` instances and workers on several hosts sharing one database. Writes that race between
/// processes (two registrations of one token, a lease taken over) are settled by the database: upserts,
/// row locks, and lease fences checked in the writing transaction. Times come from the database's clock
/// unless a clock is passed in (tests).
public final class PostgresRegistry: RegistryStore {
    /// The database.
    public let url: PostgresURL
    let pool: PostgresPool
    let clock: (@Sendable () -> Int64)?
    /// This process's row of each counter (see ``PostgresSchema``'s migration 6): one of 16, at random.
    let counterBucket = Int16.random(in: 0..<16)
    /// Wakes workers waiting for shards (``DeliveryStore/waitForWork(timeoutMs:)``).
    let wakeups: PostgresWakeups
    /// Runs this registry's blocking calls for async callers: the pool's connections plus four, so a call
    /// that waits for a connection (or for a statement's deadline on a vanished host) never holds up all of them.
    public let executor: StoreExecutor

    /// Opens (and migrates) the database at `url` with a pool of `connections` connections. `password` is
    /// sent only if the server asks for one. A statement unanswered for `queryTimeoutSeconds` fails as
    /// unavailable and its connection is dropped. `nowMs` replaces the database's clock (tests only).
    public init(
        url: PostgresURL, password: String?, connections: Int = 4, queryTimeoutSeconds: Int = 60,
        nowMs: (@Sendable () -> Int64)? = nil, logger: Logger = Logger(label: "postgres")
    ) throws(StoreError) {
        self.url = url
        clock = nowMs
        pool = try PostgresPool(
            url: url, password: password, size: connections, queryTimeout: .seconds(Int64(queryTimeoutSeconds)), logger: logger)
        wakeups = PostgresWakeups(pool: pool, channel: Self.shardChannel)
        executor = StoreExecutor(threads: connections + 4)
        try PostgresSchema.migrate(pool)
    }

    /// Opens `url`, reading the password from the first line of `passwordFile` or from the environment
    /// variable `passwordEnv` (never from the URL or the command line). A password file that cannot be read or
    /// a variable that is not set is a configuration problem (`.invalidInput`), not the database's.
    public static func open(
        url text: String, passwordFile: String?, passwordEnv: String?, connections: Int = 4
    ) throws(StoreError) -> PostgresRegistry {
        let url = try PostgresURL(parsing: text)
        var password: String?
        if let passwordFile {
            guard let data = FileManager.default.contents(atPath: passwordFile), let text = String(data: data, encoding: .utf8) else {
                throw StoreError(.invalidInput, "cannot read the database password file \(passwordFile)")
            }
            password = text.split(separator: "\n", omittingEmptySubsequences: false).first.map(String.init) ?? ""
        } else if let passwordEnv {
            guard let value = ProcessInfo.processInfo.environment[passwordEnv] else {
                throw StoreError(.invalidInput, "the database password variable \(passwordEnv) is not set")
            }
            password = value
        }
        return try PostgresRegistry(url: url, password: password, connections: connections)
    }

    /// The URL (it holds no password).
    public var location: String { url.description }

    /// Waits for a `NOTIFY` from a process that started a broadcast or gave a shard back, or `timeoutMs`.
    public func waitForWork(timeoutMs: Int) async { await wakeups.wait(timeoutMs: timeoutMs, executor: executor) }


    /// The injected clock's time, or nil for the database's (`coalesce(\(now), pp_now_ms())` in SQL).
    var now: Int64? { clock?() }

    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func schemaVersion() throws(StoreError) -> Int64 {
        try pool.withConnection { (db) throws(StoreError) -> Int64 in
            try db.row("SELECT coalesce(max(version), 0)::bigint FROM schema_version", as: (Int64).self) ?? 0
        }
    }

    // MARK: devices

    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    @discardableResult
    public func register(
        app: String, token: DeviceToken, oldToken: DeviceToken? = nil, channels: [String]? = nil,
        environment: APNsEnvironment? = nil
    ) throws(StoreError) -> RegistrationOutcome {
        let request = RegistrationRequest(app: app, token: token, oldToken: oldToken, channels: channels, environment: environment)
        let normalized = try channels.map { (c) throws(StoreError) in try Channels.normalize(c) }
        return try pool.transaction { (db) throws(StoreError) in try register(request, channels: normalized, in: db) }
    }

    /// One transaction for the whole batch. Plain registrations (no old token, no channels: what apps send
    /// at every launch) are written as one multi-row upsert in key order, their installation fields as one read and
    /// one multi-row update; the others one by one, each in a savepoint so one failure does not undo the rest.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func registerBatch(_ requests: [RegistrationRequest]) -> [Result<RegistrationOutcome, StoreError>] {
        guard !requests.isEmpty else { return [] }
        var results = [Result<RegistrationOutcome, StoreError>?](repeating: nil, count: requests.count)
        var plain: [Int] = []
        var seen = Set<String>()
        for (i, r) in requests.enumerated() where r.oldToken == nil && r.channels == nil {
            if seen.insert(r.app + "\u{0}" + r.token.hex).inserted { plain.append(i) }
        }
        let plainSet = Set(plain)
        do throws(StoreError) {
            try pool.transaction { (db) throws(StoreError) in
                if !plain.isEmpty {
                    let sorted = plain.sorted { (requests[$0].app, requests[$0].token.hex) < (requests[$1].app, requests[$1].token.hex) }
                    let outcomes = try upsertPlain(sorted.map { requests[$0] }, in: db)
                    for (i, outcome) in zip(sorted, outcomes) { results[i] = .success(outcome) }
                    try applyInstallationBatch(sorted.map { requests[$0] }, outcomes: outcomes, in: db)
                }
                for (i, request) in requests.enumerated() where !plainSet.contains(i) {
                    do throws(StoreError) {
                        let channels = try request.channels.map { (c) throws(StoreError) in try Channels.normalize(c) }
                        try db.execute("SAVEPOINT r")
                        do throws(StoreError) {
                            results[i] = .success(try register(request, channels: channels, in: db))
                            try db.execute("RELEASE SAVEPOINT r")
                        } catch {
                            try db.execute("ROLLBACK TO SAVEPOINT r")
                            throw error
                        }
                    } catch {
                        if error.code == .ioError { throw error }
                        results[i] = .failure(error)
                    }
                }
            }
        } catch {
            return requests.map { _ in .failure(error) }
        }
        return results.map { $0 ?? .failure(StoreError(.unknown(0), "registration was not written")) }
    }

    private func upsertPlain(_ requests: [RegistrationRequest], in db: PostgresSession) throws(StoreError) -> [RegistrationOutcome] {
        var inserted: [String: Bool] = [:]
        // A given environment replaces the stored one; without one a device keeps its own (new ones: production).
        for given in [true, false] {
            let group = requests.filter { ($0.environment != nil) == given }
            guard !group.isEmpty else { continue }
            let apps = group.map(\.app), tokens = group.map(\.token.hex)
            let environments = group.map { $0.environment?.rawValue ?? APNsEnvironment.production.rawValue }
            // The fields a device gets if this creates it (nothing is replaced here, so no zone change to stamp);
            // a device already stored keeps its own here and gets them from applyInstallationBatch. A group without
            // any leaves the installation columns out (NULL) rather than decode an empty object per row.
            let fields = group.map { r in
                StoredInstallation.forNewDevice(r.installation, replaced: nil, now: 0)?.columns.json().encodedString ?? "{}"
            }
            let given = fields.contains { $0 != "{}" }
            let rows = try db.rows("""
                INSERT INTO devices AS d (app, token, environment, channels, created_ms, last_registered_ms
                    \(unescaped: given ? ", " + Self.installationNames : ""))
                SELECT a, t, e, '', n.ms, n.ms \(unescaped: given ? ", " + Self.installationValues : "")
                FROM unnest(\(apps)::text[], \(tokens)::text[], \(environments)::text[], \(fields)::text[]) AS r (a, t, e, f)
                \(unescaped: given ? "CROSS JOIN LATERAL jsonb_to_record(r.f::jsonb) AS x (\(Self.installationRecord))" : "")
                CROSS JOIN (SELECT coalesce(\(now)::bigint, pp_now_ms()) AS ms) n
                ORDER BY a, t
                ON CONFLICT (app, token) DO UPDATE SET last_registered_ms = excluded.last_registered_ms,
                    environment = CASE WHEN \(given) THEN excluded.environment ELSE d.environment END
                RETURNING d.app, d.token, (xmax = 0)
                """, as: (String, String, Bool).self)
            for (app, token, isNew) in rows { inserted[app + "\u{0}" + token] = isNew }
        }
        return requests.map { inserted[$0.app + "\u{0}" + $0.token.hex] == true ? .created : .updated }
    }

    private struct StoredDevice {
        var id: Int64
        var environment: String
        var channels: [String]
        var lastRegisteredMs: Int64
    }

    private func find(app: String, token: DeviceToken, lock: Bool, in db: PostgresSession) throws(StoreError) -> StoredDevice? {
        let hex = token.hex
        let query: PostgresQuery = lock
            ? "SELECT id, environment, channels, last_registered_ms FROM devices WHERE app = \(app) AND token = \(hex) FOR UPDATE"
            : "SELECT id, environment, channels, last_registered_ms FROM devices WHERE app = \(app) AND token = \(hex)"
        guard let (id, environment, channels, last) = try db.row(query, as: (Int64, String, String, Int64).self) else { return nil }
        return StoredDevice(id: id, environment: environment, channels: Channels.decode(channels), lastRegisteredMs: last)
    }

    private func register(_ request: RegistrationRequest, channels given: [String]?, in db: PostgresSession) throws(StoreError) -> RegistrationOutcome {
        let app = request.app
        var replaced: StoredDevice?
        var replacedInstallation: StoredInstallation?
        if let old = request.tokenToReplace, let row = try find(app: app, token: old, lock: true, in: db) {
            replacedInstallation = try storedInstallation(id: row.id, in: db)
            try db.query("DELETE FROM devices WHERE id = \(row.id)")
            replaced = row
        }
        let existing = try find(app: app, token: request.token, lock: true, in: db)
        let (channels, environment) = request.resolved(
            channels: given, existing: existing.map { ($0.environment, $0.channels) },
            replaced: replaced.map { ($0.environment, $0.channels) })
        let id: Int64
        var created = false
        if let existing {
            let encoded = Channels.encode(channels ?? existing.channels)
            try db.query("""
                UPDATE devices SET last_registered_ms = coalesce(\(now)::bigint, pp_now_ms()), environment = \(environment),
                    channels = \(encoded)
                WHERE id = \(existing.id)
                """)
            id = existing.id
            if let channels, channels != existing.channels { try setChannels(channels, of: id, app: app, token: request.token, in: db) }
        } else {
            let encoded = Channels.encode(channels ?? [])
            let hex = request.token.hex
            // The installation fields ride in the INSERT when it creates the device; a zone carried over from the
            // replaced token and changed is stamped with the store's clock.
            var fields = "{}"
            if StoredInstallation.isWritten(by: request.installation, replaced: replacedInstallation) {
                let nowMs = try replacedInstallation == nil ? 0 : storeNowMs(in: db)
                fields = StoredInstallation.forNewDevice(request.installation, replaced: replacedInstallation, now: nowMs)?
                    .columns.json().encodedString ?? "{}"
            }
            // Another process may insert the same token between our read and this write: the upsert settles it (and
            // the fields are then applied to the stored row below, as for a device that existed).
            guard let (newId, isNew) = try db.row("""
                INSERT INTO devices AS d (app, token, environment, channels, created_ms, last_registered_ms,
                    \(unescaped: Self.installationNames))
                SELECT \(app), \(hex), \(environment), \(encoded), n.ms, n.ms, \(unescaped: Self.installationValues)
                FROM (SELECT coalesce(\(now)::bigint, pp_now_ms()) AS ms) n
                CROSS JOIN jsonb_to_record(\(fields)::jsonb) AS x (\(unescaped: Self.installationRecord))
                ON CONFLICT (app, token) DO UPDATE SET last_registered_ms = excluded.last_registered_ms,
                    environment = excluded.environment,
                    channels = CASE WHEN \(channels != nil) THEN excluded.channels ELSE d.channels END
                RETURNING id, (xmax = 0)
                """, as: (Int64, Bool).self)
            else { throw StoreError(.unknown(0), "insert returned no id") }
            id = newId
            created = isNew
            if let channels, !channels.isEmpty || !isNew { try setChannels(channels, of: id, app: app, token: request.token, in: db) }
        }
        if !created {
            try applyInstallation(request.installation, id: id, replaced: replacedInstallation, in: db)
        }
        return .of(replacing: replaced == nil ? nil : request.oldToken, created: created)
    }

    private func setChannels(_ channels: [String], of id: Int64, app: String, token: DeviceToken, in db: PostgresSession) throws(StoreError) {
        let hex = token.hex
        try db.query("DELETE FROM device_channels WHERE device_id = \(id)")
        if channels.isEmpty { return }
        try db.query("""
            INSERT INTO device_channels (app, channel, token, device_id)
            SELECT \(app), c, \(hex), \(id) FROM unnest(\(channels)::text[]) AS c
            """)
    }

    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    @discardableResult
    public func unregister(app: String, token: DeviceToken) throws(StoreError) -> Bool {
        let hex = token.hex
        return try pool.withConnection { (db) throws(StoreError) -> Bool in
            try db.changes("DELETE FROM devices WHERE app = \(app) AND token = \(hex)") > 0
        }
    }

    static let deviceColumns = "token, environment, channels, created_ms, last_registered_ms, last_success_ms"

    static func device(_ row: (String, String, String, Int64, Int64, Int64?)) -> RegisteredDevice {
        RegisteredDevice(
            token: DeviceToken(trustedCanonicalHex: row.0), environment: APNsEnvironment(rawValue: row.1) ?? .production,
            channels: Channels.decode(row.2), createdMs: row.3, lastRegisteredMs: row.4, lastSuccessMs: row.5)
    }

    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func device(app: String, token: DeviceToken) throws(StoreError) -> RegisteredDevice? {
        let hex = token.hex
        return try pool.withConnection { (db) throws(StoreError) -> RegisteredDevice? in
            try db.row(
                PostgresQuery(unsafeSQL: "SELECT \(Self.deviceColumns) FROM devices WHERE app = $1 AND token = $2",
                              binds: Self.binds(app, hex)),
                as: (String, String, String, Int64, Int64, Int64?).self
            ).map(Self.device)
        }
    }

    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func count(app: String, channel: String? = nil, environment: APNsEnvironment? = nil) throws(StoreError) -> Int {
        if let channel { try Channels.validate(channel) }
        let env = environment?.rawValue
        return try pool.withConnection { (db) throws(StoreError) -> Int in
            let n: Int64?
            if let channel {
                n = try db.row("""
                    SELECT count(*)::bigint FROM device_channels c JOIN devices d ON d.id = c.device_id
                    WHERE c.app = \(app) AND c.channel = \(channel) AND (\(env)::text IS NULL OR d.environment = \(env))
                    """, as: (Int64).self)
            } else {
                n = try db.row("""
                    SELECT count(*)::bigint FROM devices WHERE app = \(app) AND (\(env)::text IS NULL OR environment = \(env))
                    """, as: (Int64).self)
            }
            return Int(n ?? 0)
        }
    }

    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func page(app: String, channel: String?, environment: APNsEnvironment?, after: String, limit: Int)
        throws(StoreError) -> [RegisteredDevice]
    {
        if let channel { try Channels.validate(channel) }
        let env = environment?.rawValue
        let limit = Int64(limit)
        return try pool.withConnection { (db) throws(StoreError) -> [RegisteredDevice] in
            let columns = "d.token, d.environment, d.channels, d.created_ms, d.last_registered_ms, d.last_success_ms"
            let sql = channel == nil
                ? """
                SELECT \(columns) FROM devices d
                WHERE d.app = $1 AND d.token > $2 AND ($3::text IS NULL OR d.environment = $3) ORDER BY d.token LIMIT $4
                """
                : """
                SELECT \(columns) FROM device_channels c JOIN devices d ON d.id = c.device_id
                WHERE c.app = $1 AND c.channel = $5 AND c.token > $2 AND ($3::text IS NULL OR d.environment = $3)
                ORDER BY c.token LIMIT $4
                """
            var binds = PostgresBindings()
            binds.append(app)
            binds.append(after)
            binds.append(env)
            binds.append(limit)
            if let channel { binds.append(channel) }
            return try db.rows(PostgresQuery(unsafeSQL: sql, binds: binds), as: (String, String, String, Int64, Int64, Int64?).self)
                .map(Self.device)
        }
    }

    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func tokenPage(app: String, channel: String?, environment: APNsEnvironment?, after: String, limit: Int)
        throws(StoreError) -> [String]
    {
        if let channel { try Channels.validate(channel) }
        let (env, limit) = (environment?.rawValue, Int64(limit))
        return try pool.withConnection { (db) throws(StoreError) -> [String] in
            if let channel {
                return try db.rows("""
                    SELECT c.token FROM device_channels c JOIN devices d ON d.id = c.device_id
                    WHERE c.app = \(app) AND c.channel = \(channel) AND c.token > \(after)
                        AND (\(env)::text IS NULL OR d.environment = \(env))
                    ORDER BY c.token LIMIT \(limit)
                    """, as: (String).self)
            }
            return try db.rows("""
                SELECT token FROM devices WHERE app = \(app) AND token > \(after) AND (\(env)::text IS NULL OR environment = \(env))
                ORDER BY token LIMIT \(limit)
                """, as: (String).self)
        }
    }

    static func binds(_ values: String...) -> PostgresBindings {
        var b = PostgresBindings()
        for v in values { b.append(v) }
        return b
    }

    // MARK: prunes and the delivery log

    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    @discardableResult
    public func prune(app: String, token: DeviceToken, reason: APNsReason, apnsTimestampMs: Int64?) throws(StoreError) -> PruneOutcome {
        try PruneGate.check(reason)
        return try pool.transaction { (db) throws(StoreError) -> PruneOutcome in
            try prune(app: app, token: token, reason: reason, apnsTimestampMs: apnsTimestampMs, in: db)
        }
    }

    func prune(app: String, token: DeviceToken, reason: APNsReason, apnsTimestampMs: Int64?, in db: PostgresSession) throws(StoreError) -> PruneOutcome {
        let keep: Bool, lastRegisteredMs: Int64
        if let row = try find(app: app, token: token, lock: true, in: db) {
            keep = PruneGate.keeps(reason: reason, lastRegisteredMs: row.lastRegisteredMs, apnsTimestampMs: apnsTimestampMs)
            lastRegisteredMs = row.lastRegisteredMs
            if !keep { try db.query("DELETE FROM devices WHERE id = \(row.id)") }
        } else if let la = try pruneLiveActivityToken(app: app, token: token, reason: reason, apnsTimestampMs: apnsTimestampMs, in: db) {
            (keep, lastRegisteredMs) = la
        } else {
            return .notFound
        }
        let (hex, action, reasonText) = (token.hex, PruneGate.action(keep: keep), reason.rawValue)
        try db.query("""
            INSERT INTO prune_log (app, token, reason, action, apns_timestamp_ms, last_registered_ms, at_ms)
            VALUES (\(app), \(hex), \(reasonText), \(action), \(apnsTimestampMs), \(lastRegisteredMs), coalesce(\(now)::bigint, pp_now_ms()))
            """)
        try db.query("""
            INSERT INTO prune_counters (app, reason, action, bucket, count) VALUES (\(app), \(reasonText), \(action), \(counterBucket), 1)
            ON CONFLICT (app, reason, action, bucket) DO UPDATE SET count = prune_counters.count + 1
            """)
        return PruneGate.outcome(keep: keep)
    }

    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func pruneLog(app: String, limit: Int = 100) throws(StoreError) -> [PruneLogEntry] {
        let limit = Int64(limit)
        return try pool.withConnection { (db) throws(StoreError) -> [PruneLogEntry] in
            let rows = try db.rows("""
                SELECT token, reason, action, apns_timestamp_ms, last_registered_ms, at_ms FROM prune_log
                WHERE app = \(app) ORDER BY id DESC LIMIT \(limit)
                """, as: (String, String, String, Int64?, Int64?, Int64).self)
            var entries: [PruneLogEntry] = []
            for (token, reason, action, apnsMs, lastMs, atMs) in rows {
                guard let parsed = try? DeviceToken(parsing: token) else { throw StoreError(.corrupt, "prune log holds an invalid token") }
                entries.append(PruneLogEntry(
                    app: app, token: parsed, reason: APNsReason(rawValue: reason),
                    outcome: action == "deleted" ? .deleted : .skippedNewerRegistration,
                    apnsTimestampMs: apnsMs, lastRegisteredMs: lastMs, atMs: atMs))
            }
            return entries
        }
    }

    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func recordDeliveries(_ records: [DeliveryRecord]) throws(StoreError) {
        guard !records.isEmpty else { return }
        try pool.withConnection { (db) throws(StoreError) in try insertDeliveries(records, in: db) }
    }

    /// One multi-row insert (arrays unnested on the server: one round trip for the whole batch).
    func insertDeliveries(_ records: [DeliveryRecord], in db: PostgresSession) throws(StoreError) {
        guard !records.isEmpty else { return }
        let apps = records.map(\.app), ids = records.map(\.apnsId), uniques = records.map { $0.uniqueId ?? "" }
        let tokens = records.map(\.token.hex), statuses = records.map { Int64($0.status) }
        let reasons = records.map { $0.reason ?? "" }, attempts = records.map { Int64($0.attempts) }
        let dups = records.map(\.possiblyDuplicated), firsts = records.map(\.firstAttemptMs), finished = records.map(\.finishedMs)
        let kinds = records.map { $0.kind?.rawValue ?? "" }, broadcasts = records.map { $0.broadcastId ?? "" }
        try db.query("""
            INSERT INTO delivery_log (app, apns_id, unique_id, token, status, reason, attempts, possibly_duplicated,
                first_attempt_ms, finished_ms, kind, broadcast_id)
            SELECT a, i, nullif(u, ''), t, s, nullif(r, ''), n, p, f, e, nullif(k, ''), nullif(b, '')
            FROM unnest(\(apps)::text[], \(ids)::text[], \(uniques)::text[], \(tokens)::text[], \(statuses)::bigint[],
                \(reasons)::text[], \(attempts)::bigint[], \(dups)::boolean[], \(firsts)::bigint[], \(finished)::bigint[],
                \(kinds)::text[], \(broadcasts)::text[])
                AS x (a, i, u, t, s, r, n, p, f, e, k, b)
            """)
        try countDeliveries(records, in: db)
    }

    /// Adds `records` to the delivery counters (this process's bucket), inside the caller's transaction.
    func countDeliveries(_ records: [DeliveryRecord], in db: PostgresSession) throws(StoreError) {
        let tally = DeliveryCount.tally(records)
        guard !tally.isEmpty else { return }
        let apps = tally.map(\.key.app), statuses = tally.map { Int64($0.key.status) }, reasons = tally.map(\.key.reason)
        let counts = tally.map { Int64($0.value.count) }, retries = tally.map { Int64($0.value.retries) }
        try db.query("""
            INSERT INTO delivery_counters (app, status, reason, bucket, count, retries)
            SELECT a, s, r, \(counterBucket), c, n
            FROM unnest(\(apps)::text[], \(statuses)::bigint[], \(reasons)::text[], \(counts)::bigint[], \(retries)::bigint[])
                AS x (a, s, r, c, n)
            ON CONFLICT (app, status, reason, bucket) DO UPDATE SET count = delivery_counters.count + excluded.count,
                retries = delivery_counters.retries + excluded.retries
            """)
    }

    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func recentDeliveries(app: String, limit: Int = 100) throws(StoreError) -> [DeliveryRecord] {
        let limit = Int64(limit)
        return try pool.withConnection { (db) throws(StoreError) -> [DeliveryRecord] in
            let rows = try db.rows("""
                SELECT apns_id, unique_id, token, status::bigint, reason, attempts::bigint, possibly_duplicated,
                    first_attempt_ms, finished_ms
                FROM delivery_log WHERE app = \(app) ORDER BY id DESC LIMIT \(limit)
                """, as: (String, String?, String, Int64, String?, Int64, Bool, Int64, Int64).self)
            var out: [DeliveryRecord] = []
            for (apnsId, unique, token, status, reason, attempts, dup, first, finished) in rows {
                guard let parsed = try? DeviceToken(parsing: token) else { throw StoreError(.corrupt, "delivery log holds an invalid token") }
                out.append(DeliveryRecord(
                    app: app, apnsId: apnsId, uniqueId: unique, token: parsed, status: Int(status), reason: reason,
                    attempts: Int(attempts), possiblyDuplicated: dup, firstAttemptMs: first, finishedMs: finished))
            }
            return out
        }
    }

    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func deliveryCounts() throws(StoreError) -> [DeliveryCount] {
        try pool.withConnection { (db) throws(StoreError) -> [DeliveryCount] in
            let rows = try db.rows("""
                SELECT app, status::bigint, reason, sum(count)::bigint, sum(retries)::bigint FROM delivery_counters
                GROUP BY app, status, reason ORDER BY 1, 2, 3
                """, as: (String, Int64, String, Int64, Int64).self)
            return rows.map { (row: (String, Int64, String, Int64, Int64)) -> DeliveryCount in
                let reason: String? = row.2.isEmpty ? nil : row.2
                return DeliveryCount(app: row.0, status: Int(row.1), reason: reason, count: Int(row.3), retries: Int(row.4))
            }
        }
    }

    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func pruneCounts() throws(StoreError) -> [PruneCount] {
        try pool.withConnection { (db) throws(StoreError) -> [PruneCount] in
            try db.rows(
                "SELECT app, reason, action, sum(count)::bigint FROM prune_counters GROUP BY 1, 2, 3 ORDER BY 1, 2, 3",
                as: (String, String, String, Int64).self
            ).map { PruneCount(app: $0.0, reason: $0.1, outcome: $0.2, count: Int($0.3)) }
        }
    }

    // MARK: imports

    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func writeImportBatch(app: String, tokens: [DeviceToken], environment: APNsEnvironment, channels: [String]?)
        throws(StoreError)
    {
        try pool.transaction { (db) throws(StoreError) in
            if let channels {
                for token in tokens {
                    let request = RegistrationRequest(app: app, token: token, channels: channels, environment: environment)
                    _ = try register(request, channels: channels, in: db)
                }
                return
            }
            // Key order, one statement per 10,000 tokens: concurrent importers lock rows in the same order.
            let hexes = Array(Set(tokens.map(\.hex))).sorted()
            let env = environment.rawValue
            var start = 0
            while start < hexes.count {
                let chunk = Array(hexes[start..<min(hexes.count, start + 10_000)])
                try db.query("""
                    INSERT INTO devices AS d (app, token, environment, channels, created_ms, last_registered_ms)
                    SELECT \(app), t, \(env), '', n.ms, n.ms
                    FROM unnest(\(chunk)::text[]) AS t CROSS JOIN (SELECT coalesce(\(now)::bigint, pp_now_ms()) AS ms) n
                    ORDER BY t
                    ON CONFLICT (app, token) DO UPDATE
                    SET environment = excluded.environment, last_registered_ms = excluded.last_registered_ms
                    """)
                start += 10_000
            }
        }
    }
}
