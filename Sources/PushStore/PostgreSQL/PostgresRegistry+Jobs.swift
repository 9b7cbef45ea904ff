import PushCore
import PostgresNIO

extension PostgresRegistry {
    /// Now on the store's clock (ms since 1970): the database's, or the clock a test passed in.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func clockMs() throws(StoreError) -> Int64 {
        if let now { return now }
        return try pool.withConnection { (db) throws(StoreError) -> Int64 in
            try db.row("SELECT pp_now_ms()", as: (Int64).self) ?? 0
        }
    }

    /// Cancels broadcast `id` of `app` (see ``RegistryStore/cancelBroadcast(id:app:)``).
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func cancelBroadcast(id: String, app: String) throws(StoreError) -> BroadcastRecord? {
        try pool.transaction { (db) throws(StoreError) -> BroadcastRecord? in
            guard let record = try broadcast(id: id, in: db, lock: true), record.app == app else { return nil }
            guard let change = record.after(.cancel, now: try storeNowMs(in: db)) else { return record }
            try store(change, id: id, in: db)
            try notify(id, in: db)
            return try broadcast(id: id, in: db)
        }
    }
}
