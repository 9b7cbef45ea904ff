import PushCore

extension SQLiteRegistry {
    /// Stores several new broadcasts in one transaction (a local-time job's waves).
    public func createBroadcasts(_ records: [BroadcastRecord]) throws(StoreError) {
        let now = nowMs()
        try write { (db) throws(StoreError) in
            for record in records { try Self.insertBroadcast(record, tokens: nil, now: now, in: db) }
        }
    }
}
