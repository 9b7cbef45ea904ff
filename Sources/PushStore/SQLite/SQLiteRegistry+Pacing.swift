import PushCore

extension SQLiteRegistry {
    /// Stores broadcast `id`'s rate, or removes it (nil). A new rate starts its schedule afresh, now (it owes nothing to the
    /// old one); the same rate again (a second run of the id) keeps the schedule the running processes share.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func setRate(id: String, perSecond: Double?) throws(StoreError) {
        try write { (db) throws(StoreError) in
            guard let perSecond else {
                let delete = try db.statement("DELETE FROM broadcast_rates WHERE broadcast_id = ?1")
                try delete.bind(1, id)
                try delete.run()
                return
            }
            guard perSecond > 0, perSecond.isFinite else { throw StoreError(.invalidInput, "a rate must be a positive number") }
            let upsert = try db.statement("""
                INSERT INTO broadcast_rates (broadcast_id, per_second, next_ms) VALUES (?1, ?2, ?3)
                ON CONFLICT (broadcast_id) DO UPDATE SET per_second = excluded.per_second,
                    next_ms = CASE WHEN per_second = excluded.per_second THEN next_ms ELSE excluded.next_ms END
                """)
            try upsert.bind(1, id)
            try upsert.bind(2, perSecond)
            try upsert.bind(3, Double(nowMs()))
            try upsert.run()
        }
    }

    /// Reserves `count` of broadcast `id`'s notifications under its stored rate (see ``Pacer``), on this
    /// registry's clock; nil when it has no rate. The write lock serializes reservations of every process.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func reserveSends(id: String, count: Int) throws(StoreError) -> RateReservation? {
        // Most broadcasts have no rate: find that out without taking the write lock.
        let limited = try read { (db) throws(StoreError) -> Bool in
            let select = try db.statement("SELECT 1 FROM broadcast_rates WHERE broadcast_id = ?1")
            defer { select.reset() }
            try select.bind(1, id)
            return try select.step()
        }
        guard limited else { return nil }
        return try write { (db) throws(StoreError) -> RateReservation? in
            let select = try db.statement("SELECT per_second, next_ms FROM broadcast_rates WHERE broadcast_id = ?1")
            try select.bind(1, id)
            guard try select.step() else {
                select.reset()
                return nil
            }
            let (perSecond, next) = (select.double(0), select.double(1))
            select.reset()
            let (wait, moved) = Pacer.reserve(count: count, perSecond: perSecond, nextMs: next, nowMs: Double(nowMs()))
            let update = try db.statement("UPDATE broadcast_rates SET next_ms = ?2 WHERE broadcast_id = ?1")
            try update.bind(1, id)
            try update.bind(2, moved)
            try update.run()
            return RateReservation(waitMs: wait, perSecond: perSecond)
        }
    }
}
