import PostgresNIO
import PushCore

/// The webhook outbox on PostgreSQL: claims skip rows another process holds (`FOR UPDATE SKIP LOCKED`), and a
/// lease is a due time moved into the future (see ``SQLiteRegistry``'s).
extension PostgresRegistry {
    func insertWebhookEvents(_ events: [WebhookEvent], in db: PostgresSession) throws(StoreError) {
        guard !events.isEmpty else { return }
        let apps = events.map(\.app), kinds = events.map(\.kind.rawValue), tokens = events.map(\.token)
        let statuses = events.map { Int64($0.status) }, reasons = events.map { $0.reason ?? "" }
        let notificationIds = events.map { $0.notificationId ?? "" }, broadcasts = events.map { $0.broadcastId ?? "" }
        let stamps = events.map { $0.apnsTimestampMs ?? -1 }, services = events.map(\.service.rawValue)
        try db.query("""
            INSERT INTO webhook_events (app, kind, token, status, reason, apns_id, broadcast_id, apns_timestamp_ms, created_ms,
                service)
            SELECT a, k, t, s, nullif(r, ''), nullif(i, ''), nullif(b, ''), nullif(ts, -1), coalesce(\(now)::bigint, pp_now_ms()), v
            FROM unnest(\(apps)::text[], \(kinds)::text[], \(tokens)::text[], \(statuses)::bigint[], \(reasons)::text[],
                \(notificationIds)::text[], \(broadcasts)::text[], \(stamps)::bigint[], \(services)::text[])
                AS x (a, k, t, s, r, i, b, ts, v)
            """)
    }

    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func claimWebhookEvents(app: String, limit: Int, leaseMs: Int64) throws(StoreError) -> [WebhookEvent] {
        let limit = Int64(limit)
        return try pool.withConnection { (db) throws(StoreError) -> [WebhookEvent] in
            let rows = try db.rows("""
                WITH n AS (SELECT coalesce(\(now)::bigint, pp_now_ms()) AS ms), picked AS (
                    SELECT id FROM webhook_events, n WHERE app = \(app) AND due_ms <= n.ms ORDER BY id LIMIT \(limit)
                    FOR UPDATE SKIP LOCKED
                )
                UPDATE webhook_events w SET due_ms = n.ms + \(leaseMs) FROM picked, n WHERE w.id = picked.id
                RETURNING w.id, w.app, w.kind, w.token, w.status::bigint, w.reason, w.apns_id, w.broadcast_id,
                    w.apns_timestamp_ms, w.created_ms, w.attempts::bigint, w.service
                """, as: (Int64, String, String, String, Int64, String?, String?, String?, Int64?, Int64, Int64, String).self)
            return rows.map { r in
                WebhookEvent(
                    id: r.0, app: r.1, kind: WebhookEvent.Kind(rawValue: r.2) ?? .deliveryFailed, token: r.3, status: Int(r.4),
                    reason: r.5, notificationId: r.6, broadcastId: r.7, apnsTimestampMs: r.8, createdMs: r.9, attempts: Int(r.10),
                    service: PushService(rawValue: r.11) ?? .apns)
            }.sorted { $0.id < $1.id }
        }
    }

    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func deleteWebhookEvents(ids: [Int64]) throws(StoreError) {
        try pool.withConnection { (db) throws(StoreError) in
            _ = try db.query("DELETE FROM webhook_events WHERE id = ANY(\(ids)::bigint[])")
        }
    }

    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func retryWebhookEvents(ids: [Int64], afterMs: Int64) throws(StoreError) {
        try pool.withConnection { (db) throws(StoreError) in
            _ = try db.query("""
                UPDATE webhook_events SET attempts = attempts + 1, due_ms = coalesce(\(now)::bigint, pp_now_ms()) + \(afterMs)
                WHERE id = ANY(\(ids)::bigint[])
                """)
        }
    }

    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func webhookBacklog(app: String) throws(StoreError) -> Int {
        try pool.withConnection { (db) throws(StoreError) -> Int in
            Int(try db.row("SELECT count(*)::bigint FROM webhook_events WHERE app = \(app)", as: (Int64).self) ?? Int64(0))
        }
    }
}
