import PostgresNIO
import PushCore

/// Audiences on PostgreSQL (see `SQLiteRegistry+Audiences.swift`): the same filter compiled to PostgreSQL's dialect; the
/// planner picks `devices_user` for a user's devices (the tests assert it), the channel index for a channel, and
/// the devices' key otherwise.
extension PostgresRegistry {
    static func bindings(_ values: [SQLValue], after leading: PostgresBindings = PostgresBindings()) -> PostgresBindings {
        var binds = leading
        for value in values {
            switch value {
            case .text(let s): binds.append(s)
            case .int(let n): binds.append(n)
            case .double(let d): binds.append(d)
            case .texts(let items): binds.append(items)
            }
        }
        return binds
    }

    func countTargeted(_ record: BroadcastRecord, in db: PostgresSession) throws(StoreError) -> Int {
        try count(AudienceScan(.postgres, record, firstIndex: 1), in: db)
    }

    private func count(_ scan: AudienceScan, in db: PostgresSession) throws(StoreError) -> Int {
        let n = try db.row(
            PostgresQuery(unsafeSQL: "SELECT count(*)::bigint FROM \(scan.from) WHERE \(scan.condition)", binds: Self.bindings(scan.values)),
            as: (Int64).self)
        return Int(n ?? 0)
    }

    /// Every `size`-th targeted token of a job with targeting (its shard cuts).
    func audienceCutsQuery(of record: BroadcastRecord, total: Int64, size: Int64) -> PostgresQuery {
        let scan = AudienceScan(.postgres, record, firstIndex: 3)
        var leading = PostgresBindings()
        leading.append(size)
        leading.append(total)
        return PostgresQuery(unsafeSQL: """
            SELECT token FROM (SELECT \(scan.key) AS token, row_number() OVER (ORDER BY \(scan.key)) AS rn
                FROM \(scan.from) WHERE \(scan.condition)) t
            WHERE rn % $1 = 0 AND rn < $2 ORDER BY token
            """, binds: Self.bindings(scan.values, after: leading))
    }

    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func audienceTargetPage(of record: BroadcastRecord, after: String, through: String, limit: Int) throws(StoreError) -> [DeliveryTarget] {
        let scan = AudienceScan(.postgres, record, firstIndex: 4)
        var leading = Self.binds(after, through)
        leading.append(Int64(limit))
        return try pool.withConnection { (db) throws(StoreError) -> [DeliveryTarget] in
            try db.rows(
                PostgresQuery(unsafeSQL: """
                    SELECT \(scan.key), d.environment, d.locale, d.service, d.subscription FROM \(scan.from)
                    WHERE \(scan.condition) AND \(scan.key) > $1 AND \(scan.key) <= $2 ORDER BY \(scan.key) LIMIT $3
                    """, binds: Self.bindings(scan.values, after: leading)),
                as: (String, String, String?, String, String?).self
            ).map { DeliveryTarget(storedToken: $0.0, environment: $0.1, locale: $0.2, service: $0.3, subscription: $0.4) }
        }
    }

    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func countAudience(app: String, environment: APNsEnvironment?, audience: Audience) throws(StoreError) -> Int {
        try pool.withConnection { (db) throws(StoreError) -> Int in
            try count(AudienceScan(.postgres, app: app, environment: environment, audience: audience, wave: nil, channel: nil, firstIndex: 1), in: db)
        }
    }

    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func audiencePlan(app: String, audience: Audience) throws(StoreError) -> String {
        let scan = AudienceScan(.postgres, app: app, environment: nil, audience: audience, wave: nil, channel: nil, firstIndex: 4)
        var leading = Self.binds("", BroadcastShard.keySpaceEnd)
        leading.append(Int64(100))
        return try pool.withConnection { (db) throws(StoreError) -> String in
            try db.rows(
                PostgresQuery(unsafeSQL: """
                    EXPLAIN SELECT \(scan.key), d.environment, d.locale FROM \(scan.from)
                    WHERE \(scan.condition) AND \(scan.key) > $1 AND \(scan.key) <= $2 ORDER BY \(scan.key) LIMIT $3
                    """, binds: Self.bindings(scan.values, after: leading)),
                as: (String).self
            ).joined(separator: "\n")
        }
    }

    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func pushToStartTokens(app: String, attributesType: String, audience: Audience, environment: APNsEnvironment?)
        throws(StoreError) -> [DeviceToken]
    {
        var sql = AudienceSQL(.postgres, firstIndex: 4)
        let condition = sql.condition(audience: audience, wave: nil)
        var leading = Self.binds(app, attributesType)
        leading.append(environment?.rawValue)
        return try pool.withConnection { (db) throws(StoreError) -> [DeviceToken] in
            try db.rows(
                PostgresQuery(unsafeSQL: """
                    SELECT l.token FROM live_activity_tokens l
                    WHERE l.app = $1 AND l.kind = 'start' AND l.attributes_type = $2 AND ($3::text IS NULL OR l.environment = $3)
                        AND l.installation IN (SELECT d.installation FROM devices d
                            WHERE d.app = $1 AND d.installation IS NOT NULL AND \(condition))
                    ORDER BY l.token
                    """, binds: Self.bindings(sql.values, after: leading)),
                as: (String).self
            ).map { DeviceToken(trustedCanonicalHex: $0) }
        }
    }
}

extension PostgresRegistry {
    /// `ANALYZE devices`: fresh planner statistics (the tests that assert query plans take them first, as
    /// autovacuum would on a real registry).
    func analyze() throws(StoreError) {
        try pool.withConnection { (db) throws(StoreError) in try db.execute("ANALYZE devices") }
    }
}
