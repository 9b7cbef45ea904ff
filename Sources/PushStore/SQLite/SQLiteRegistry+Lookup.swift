import PushCore

extension SQLiteRegistry {
    /// One device, or nil when `token` is not registered for `app`.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func device(app: String, token: DeviceToken) throws(StoreError) -> RegisteredDevice? {
        try read { (db) throws(StoreError) -> RegisteredDevice? in
            let select = try db.statement("""
                SELECT token, environment, channels, created_ms, last_registered_ms, last_success_ms, service, subscription
                FROM devices WHERE app = ?1 AND token = ?2
                """)
            defer { select.reset() }
            try select.bind(1, app)
            try select.bind(2, token.hex)
            return try select.step() ? try SQLiteRegistry.device(from: select) : nil
        }
    }

    /// Final delivery outcomes grouped by app, service, status and reason.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func deliveryCounts() throws(StoreError) -> [DeliveryCount] {
        try read { (db) throws(StoreError) -> [DeliveryCount] in
            let select = try db.statement("""
                SELECT app, service, status, reason, count, retries FROM delivery_counters ORDER BY 1, 2, 3, 4
                """)
            defer { select.reset() }
            var out: [DeliveryCount] = []
            while try select.step() {
                let reason = select.text(3)
                out.append(DeliveryCount(
                    app: select.text(0), service: PushService(rawValue: select.text(1)), status: Int(select.int64(2)),
                    reason: reason.isEmpty ? nil : reason, count: Int(select.int64(4)), retries: Int(select.int64(5))))
            }
            return out
        }
    }

    /// Prune-log entries grouped by app, service, reason and action.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func pruneCounts() throws(StoreError) -> [PruneCount] {
        try read { (db) throws(StoreError) -> [PruneCount] in
            let select = try db.statement("SELECT app, service, reason, action, count FROM prune_counters ORDER BY 1, 2, 3, 4")
            defer { select.reset() }
            var out: [PruneCount] = []
            while try select.step() {
                out.append(PruneCount(
                    app: select.text(0), service: PushService(rawValue: select.text(1)), reason: select.text(2),
                    outcome: select.text(3), count: Int(select.int64(4))))
            }
            return out
        }
    }
}
