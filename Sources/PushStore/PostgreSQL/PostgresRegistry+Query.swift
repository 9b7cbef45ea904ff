import PostgresNIO
import PushCore

/// Counting and paging an app's devices. (The twin of `SQLiteRegistry+Query.swift`.)
extension PostgresRegistry {
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
            let columns = "d.token, d.environment, d.channels, d.created_ms, d.last_registered_ms, d.last_success_ms, d.service, d.subscription"
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
            return try db.rows(PostgresQuery(unsafeSQL: sql, binds: binds), as: (String, String, String, Int64, Int64, Int64?, String, String?).self)
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
}
