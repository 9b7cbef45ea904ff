import PushCore

/// The webhook outbox on SQLite (see ``DeliveryStore/claimWebhookEvents(app:limit:leaseMs:)``). A lease is a
/// due time moved into the future: a claimed event is not due again until the lease ends, and a delivered
/// one is deleted.
extension SQLiteRegistry {
    static func insertWebhookEvents(_ events: [WebhookEvent], now: Int64, in db: Connection) throws(StoreError) {
        guard !events.isEmpty else { return }
        let insert = try db.statement("""
            INSERT INTO webhook_events (app, kind, token, status, reason, apns_id, broadcast_id, apns_timestamp_ms,
                created_ms, due_ms, service)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 0, ?10)
            """)
        for e in events {
            try insert.bind(1, e.app)
            try insert.bind(2, e.kind.rawValue)
            try insert.bind(3, e.token)
            try insert.bind(4, Int64(e.status))
            try insert.bind(5, e.reason)
            try insert.bind(6, e.notificationId)
            try insert.bind(7, e.broadcastId)
            try insert.bind(8, e.apnsTimestampMs)
            try insert.bind(9, now)
            try insert.bind(10, e.service.rawValue)
            try insert.run()
        }
    }

    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func claimWebhookEvents(app: String, limit: Int, leaseMs: Int64) throws(StoreError) -> [WebhookEvent] {
        let now = nowMs()
        return try write { (db) throws(StoreError) -> [WebhookEvent] in
            let select = try db.statement("""
                SELECT id, app, kind, token, status, reason, apns_id, broadcast_id, apns_timestamp_ms, created_ms, attempts,
                    service
                FROM webhook_events WHERE app = ?1 AND due_ms <= ?2 ORDER BY id LIMIT ?3
                """)
            defer { select.reset() }
            try select.bind(1, app)
            try select.bind(2, now)
            try select.bind(3, Int64(limit))
            var events: [WebhookEvent] = []
            while try select.step() {
                events.append(WebhookEvent(
                    id: select.int64(0), app: select.text(1), kind: WebhookEvent.Kind(rawValue: select.text(2)) ?? .deliveryFailed,
                    token: select.text(3), status: Int(select.int64(4)), reason: select.optionalText(5),
                    notificationId: select.optionalText(6), broadcastId: select.optionalText(7),
                    apnsTimestampMs: select.optionalInt64(8), createdMs: select.int64(9), attempts: Int(select.int64(10)),
                    service: PushService(rawValue: select.text(11)) ?? .apns))
            }
            select.reset()
            let lease = try db.statement("UPDATE webhook_events SET due_ms = ?2 WHERE id = ?1")
            for e in events {
                try lease.bind(1, e.id)
                try lease.bind(2, now + leaseMs)
                try lease.run()
            }
            return events
        }
    }

    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func deleteWebhookEvents(ids: [Int64]) throws(StoreError) {
        try write { (db) throws(StoreError) in
            let delete = try db.statement("DELETE FROM webhook_events WHERE id = ?1")
            for id in ids {
                try delete.bind(1, id)
                try delete.run()
            }
        }
    }

    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func retryWebhookEvents(ids: [Int64], afterMs: Int64) throws(StoreError) {
        let now = nowMs()
        try write { (db) throws(StoreError) in
            let update = try db.statement("UPDATE webhook_events SET attempts = attempts + 1, due_ms = ?2 WHERE id = ?1")
            for id in ids {
                try update.bind(1, id)
                try update.bind(2, now + afterMs)
                try update.run()
            }
        }
    }

    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func webhookBacklog(app: String) throws(StoreError) -> Int {
        try read { (db) throws(StoreError) -> Int in Int(try Self.scalar("SELECT count(*) FROM webhook_events WHERE app = ?1", app, in: db)) }
    }
}
