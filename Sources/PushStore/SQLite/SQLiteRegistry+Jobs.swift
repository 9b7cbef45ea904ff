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
            guard let change = record.after(.cancel, now: now) else { return record }
            try Self.store(change, id: id, in: db)
            return try Self.broadcast(id: id, in: db)
        }
    }
}
