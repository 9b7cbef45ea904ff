import PostgresNIO
import PushCore

/// Bulk token imports. (The twin of `SQLiteRegistry+Import.swift`.)
extension PostgresRegistry {
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
                    WHERE d.service = 'apns'
                    """)
                start += 10_000
            }
        }
    }
}
