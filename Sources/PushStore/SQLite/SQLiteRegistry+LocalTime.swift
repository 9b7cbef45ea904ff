import PushCore

extension SQLiteRegistry {
    /// Stores several new broadcasts in one transaction (a local-time job's waves).
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func createBroadcasts(_ records: [BroadcastRecord]) throws(StoreError) {
        let now = nowMs()
        try write { (db) throws(StoreError) in
            for record in records { try Self.insertBroadcast(record, tokens: nil, now: now, in: db) }
        }
    }
}
