import PushCore

extension SQLiteRegistry {
    /// While importing, checkpoint at 64 MB of WAL instead of SQLite's 4 MB: a page dirtied by several
    /// batches is copied back to the database once. Ordinary writes use 16 MB (see SQLiteRegistry.init): one
    /// 64 MB checkpoint would stall a single registration for half a second.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func whileImporting<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        try writer.withLock { (db) throws(StoreError) in try db.execute("PRAGMA wal_autocheckpoint = 16384") }
        defer { try? writer.withLock { (db) throws(StoreError) in try db.execute("PRAGMA wal_autocheckpoint = 4096") } }
        return try body()
    }

    /// Writes one validated import batch in one transaction.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func writeImportBatch(
        app: String, tokens: [DeviceToken], environment: APNsEnvironment, channels: [String]?
    ) throws(StoreError) {
        let now = nowMs()
        try write { (db) throws(StoreError) in
            if channels != nil {
                // With channels the channel index must be kept in step: use the full registration path.
                for token in tokens {
                    let request = RegistrationRequest(app: app, token: token, channels: channels, environment: environment)
                    _ = try Self.register(request, channels: channels, now: now, in: db)
                }
                return
            }
            let upsert = try db.statement(
                """
                INSERT INTO devices (app, token, id, environment, created_ms, last_registered_ms)
                VALUES (?1, ?2, (SELECT coalesce(max(id), 0) + 1 FROM devices), ?3, ?4, ?4)
                ON CONFLICT (app, token) DO UPDATE
                SET environment = excluded.environment, last_registered_ms = excluded.last_registered_ms
                WHERE service = 'apns'
                """)
            // Key order: each B-tree page is visited once per batch, in order, instead of at random.
            for token in tokens.sorted() {
                try upsert.bind(1, app)
                try upsert.bind(2, token.hex)
                try upsert.bind(3, environment.rawValue)
                try upsert.bind(4, now)
                try upsert.run()
            }
        }
    }
}
