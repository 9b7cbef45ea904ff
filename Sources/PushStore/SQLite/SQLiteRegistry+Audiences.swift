import PushCore

/// Audiences on SQLite: the filter compiled to a condition on `devices d` (``AudienceSQL``), read in key order.
/// The scan runs on the index the audience allows: a user's devices on `devices_user` (an index lookup of that
/// user's range), a channel's on `device_channels`, anything else on the devices' own key (app, token) with the
/// other clauses checked per row — still a keyset range scan, so shards, checkpoints and resumes work unchanged.
extension SQLiteRegistry {
    /// How many devices of `app` (in `environment`, if given) are in `audience` now.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func countAudience(app: String, environment: APNsEnvironment?, audience: Audience) throws(StoreError) -> Int {
        try read { (db) throws(StoreError) -> Int in
            try Self.countTargeted(app: app, environment: environment, audience: audience, wave: nil, in: db)
        }
    }

    /// Devices a job with targeting would reach (the caller's connection).
    static func countTargeted(
        app: String, environment: APNsEnvironment?, audience: Audience?, wave: LocalTimeWave?, in db: Connection
    ) throws(StoreError) -> Int {
        try countTargeted(AudienceScan(.sqlite, app: app, environment: environment, audience: audience, wave: wave, firstIndex: 1), in: db)
    }

    /// Devices a job with targeting reaches now (its channel too).
    static func countTargeted(_ record: BroadcastRecord, in db: Connection) throws(StoreError) -> Int {
        try countTargeted(AudienceScan(.sqlite, record, firstIndex: 1), in: db)
    }

    private static func countTargeted(_ scan: AudienceScan, in db: Connection) throws(StoreError) -> Int {
        let select = try db.statement("SELECT count(*) FROM \(scan.from) WHERE \(scan.condition)")
        defer { select.reset() }
        try bind(scan.values, to: select, from: 1)
        return try select.step() ? Int(select.int64(0)) : 0
    }

    /// `SELECT token …` of a job's targeted devices for the shard cuts, its parameters numbered from `firstIndex`.
    static func targetedTokens(of record: BroadcastRecord, firstIndex: Int) -> (sql: String, values: [SQLValue]) {
        let scan = AudienceScan(.sqlite, record, firstIndex: firstIndex)
        return ("SELECT \(scan.key) AS token FROM \(scan.from) WHERE \(scan.condition)", scan.values)
    }

    /// One keyset page of a job with targeting: its devices in (`after`, `through`], in token order, each with its
    /// locale (for per-locale text).
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func audienceTargetPage(of record: BroadcastRecord, after: String, through: String, limit: Int) throws(StoreError) -> [DeliveryTarget] {
        let scan = AudienceScan(.sqlite, record, firstIndex: 4)
        return try read { (db) throws(StoreError) -> [DeliveryTarget] in
            let select = try db.statement("""
                SELECT \(scan.key), d.environment, d.locale, d.service, d.subscription FROM \(scan.from)
                WHERE \(scan.condition) AND \(scan.key) > ?1 AND \(scan.key) <= ?2 ORDER BY \(scan.key) LIMIT ?3
                """)
            defer { select.reset() }
            try select.bind(1, after)
            try select.bind(2, through)
            try select.bind(3, Int64(limit))
            try Self.bind(scan.values, to: select, from: 4)
            var out: [DeliveryTarget] = []
            out.reserveCapacity(limit)
            while try select.step() {
                out.append(DeliveryTarget(
                    storedToken: select.text(0), environment: select.optionalText(1), locale: select.optionalText(2),
                    service: select.optionalText(3), subscription: select.optionalText(4)))
            }
            return out
        }
    }

    /// The query plan SQLite picks for an audience page (`EXPLAIN QUERY PLAN`, one line per step): what the tests
    /// assert a send to one user reads through `devices_user`.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func audiencePlan(app: String, audience: Audience) throws(StoreError) -> String {
        var record = BroadcastRecord(id: "plan", app: app, payload: [], pushType: .alert, priority: .immediate)
        record.targeting = JobTargeting(audience: audience)
        let scan = AudienceScan(.sqlite, record, firstIndex: 4)
        return try read { (db) throws(StoreError) -> String in
            let select = try db.statement("""
                EXPLAIN QUERY PLAN SELECT \(scan.key), d.environment, d.locale FROM \(scan.from)
                WHERE \(scan.condition) AND \(scan.key) > ?1 AND \(scan.key) <= ?2 ORDER BY \(scan.key) LIMIT ?3
                """)
            defer { select.reset() }
            try select.bind(1, "")
            try select.bind(2, BroadcastShard.keySpaceEnd)
            try select.bind(3, Int64(100))
            try Self.bind(scan.values, to: select, from: 4)
            var lines: [String] = []
            while try select.step() { lines.append(select.text(3)) }
            return lines.joined(separator: "\n")
        }
    }

    /// Push-to-start tokens of `attributesType` on the installations of the devices in `audience` (a Live Activity
    /// start to an audience: a device and its Live Activity tokens share the installation id).
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func pushToStartTokens(app: String, attributesType: String, audience: Audience, environment: APNsEnvironment?)
        throws(StoreError) -> [DeviceToken]
    {
        var sql = AudienceSQL(.sqlite, firstIndex: 4)
        let condition = sql.condition(audience: audience, wave: nil)
        return try read { (db) throws(StoreError) -> [DeviceToken] in
            let select = try db.statement("""
                SELECT l.token FROM live_activity_tokens l
                WHERE l.app = ?1 AND l.kind = 'start' AND l.attributes_type = ?2 AND (?3 IS NULL OR l.environment = ?3)
                    AND l.installation IN (SELECT d.installation FROM devices d
                        WHERE d.app = ?1 AND d.installation IS NOT NULL AND \(condition))
                ORDER BY l.token
                """)
            defer { select.reset() }
            try select.bind(1, app)
            try select.bind(2, attributesType)
            try select.bind(3, environment?.rawValue)
            try Self.bind(sql.values, to: select, from: 4)
            var out: [DeviceToken] = []
            while try select.step() { out.append(DeviceToken(trustedCanonicalHex: select.text(0))) }
            return out
        }
    }

    static func bind(_ values: [SQLValue], to statement: Statement, from first: Int) throws(StoreError) {
        for (i, value) in values.enumerated() {
            let index = Int32(first + i)
            switch value {
            case .text(let s): try statement.bind(index, s)
            case .int(let n): try statement.bind(index, n)
            case .double(let d): try statement.bind(index, d)
            case .texts: try statement.bind(index, value.jsonArray)
            }
        }
    }
}
