import PostgresNIO
import PushCore

extension PostgresRegistry {
    /// Stores broadcast `id`'s rate, or removes it (nil); a new rate starts its schedule afresh, now (the database's
    /// clock); the same rate again keeps the schedule the running processes share.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func setRate(id: String, perSecond: Double?) throws(StoreError) {
        guard let perSecond else {
            try pool.withConnection { (db) throws(StoreError) in
                try db.query("DELETE FROM broadcast_rates WHERE broadcast_id = \(id)")
            }
            return
        }
        guard perSecond > 0, perSecond.isFinite else { throw StoreError(.invalidInput, "a rate must be a positive number") }
        try pool.withConnection { (db) throws(StoreError) in
            try db.query("""
                INSERT INTO broadcast_rates (broadcast_id, per_second, next_ms)
                VALUES (\(id), \(perSecond), coalesce(\(self.now)::bigint, pp_now_ms())::double precision)
                ON CONFLICT (broadcast_id) DO UPDATE SET per_second = excluded.per_second,
                    next_ms = CASE WHEN broadcast_rates.per_second = excluded.per_second THEN broadcast_rates.next_ms ELSE excluded.next_ms END
                """)
        }
    }

    /// Reserves `count` of broadcast `id`'s notifications under its stored rate (see ``Pacer``), on the
    /// database's clock, so processes on several hosts share one schedule; nil when it has no rate. The row
    /// lock serializes reservations.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func reserveSends(id: String, count: Int) throws(StoreError) -> RateReservation? {
        try pool.transaction { (db) throws(StoreError) -> RateReservation? in
            guard let (perSecond, next, now) = try db.row(
                """
                SELECT per_second, next_ms, coalesce(\(self.now)::bigint, pp_now_ms())::double precision
                FROM broadcast_rates WHERE broadcast_id = \(id) FOR UPDATE
                """, as: (Double, Double, Double).self)
            else { return nil }
            let (wait, moved) = Pacer.reserve(count: count, perSecond: perSecond, nextMs: next, nowMs: now)
            try db.query("UPDATE broadcast_rates SET next_ms = \(moved) WHERE broadcast_id = \(id)")
            return RateReservation(waitMs: wait, perSecond: perSecond)
        }
    }
}
