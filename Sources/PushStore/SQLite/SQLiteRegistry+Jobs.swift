import PushCore

extension SQLiteRegistry {
    /// Now on the store's clock (ms since 1970): what scheduled jobs are compared with.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func clockMs() throws(StoreError) -> Int64 { nowMs() }

    /// Cancels broadcast `id` of `app` (see ``RegistryStore/cancelBroadcast(id:app:)``).
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func cancelBroadcast(id: String, app: String) throws(StoreError) -> BroadcastRecord? {
        let now = nowMs()
        return try write { (db) throws(StoreError) -> BroadcastRecord? in
            guard let record = try Self.broadcast(id: id, in: db), record.app == app else { return nil }
            guard record.state.isUnfinished else { return record }
            let update = try db.statement("""
                UPDATE broadcasts SET state = 'cancelled', updated_ms = ?2, finished_ms = ?2
                WHERE id = ?1 AND state NOT IN ('completed', 'cancelled')
                """)
            try update.bind(1, id)
            try update.bind(2, now)
            try update.run()
            return try Self.broadcast(id: id, in: db)
        }
    }
}
