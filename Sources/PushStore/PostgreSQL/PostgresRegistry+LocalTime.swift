import PostgresNIO
import PushCore

extension PostgresRegistry {
    /// Stores several new broadcasts in one transaction (a local-time job's waves).
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func createBroadcasts(_ records: [BroadcastRecord]) throws(StoreError) {
        try pool.transaction { (db) throws(StoreError) in
            for record in records { try insertBroadcast(record, tokens: nil, in: db) }
        }
    }
}
