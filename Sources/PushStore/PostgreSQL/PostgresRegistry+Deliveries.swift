import PostgresNIO
import PushCore

/// The delivery log and its counters. (The twin of `SQLiteRegistry+Deliveries.swift`.)
extension PostgresRegistry {
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func recordDeliveries(_ records: [DeliveryRecord]) throws(StoreError) {
        guard !records.isEmpty else { return }
        try pool.withConnection { (db) throws(StoreError) in try insertDeliveries(records, in: db) }
    }

    /// One multi-row insert (arrays unnested on the server: one round trip for the whole batch).
    func insertDeliveries(_ records: [DeliveryRecord], in db: PostgresSession) throws(StoreError) {
        guard !records.isEmpty else { return }
        let apps = records.map(\.app), ids = records.map(\.notificationId), uniques = records.map { $0.uniqueId ?? "" }
        let tokens = records.map(\.token.hex), statuses = records.map { Int64($0.status) }
        let reasons = records.map { $0.reason ?? "" }, attempts = records.map { Int64($0.attempts) }
        let dups = records.map(\.possiblyDuplicated), firsts = records.map(\.firstAttemptMs), finished = records.map(\.finishedMs)
        let kinds = records.map { $0.kind?.rawValue ?? "" }, broadcasts = records.map { $0.broadcastId ?? "" }
        let services = records.map(\.service.rawValue)
        try db.query("""
            INSERT INTO delivery_log (app, apns_id, unique_id, token, status, reason, attempts, possibly_duplicated,
                first_attempt_ms, finished_ms, kind, broadcast_id, service)
            SELECT a, i, nullif(u, ''), t, s, nullif(r, ''), n, p, f, e, nullif(k, ''), nullif(b, ''), v
            FROM unnest(\(apps)::text[], \(ids)::text[], \(uniques)::text[], \(tokens)::text[], \(statuses)::bigint[],
                \(reasons)::text[], \(attempts)::bigint[], \(dups)::boolean[], \(firsts)::bigint[], \(finished)::bigint[],
                \(kinds)::text[], \(broadcasts)::text[], \(services)::text[])
                AS x (a, i, u, t, s, r, n, p, f, e, k, b, v)
            """)
        try countDeliveries(records, in: db)
    }

    /// Adds `records` to the delivery counters (this process's bucket), inside the caller's transaction.
    func countDeliveries(_ records: [DeliveryRecord], in db: PostgresSession) throws(StoreError) {
        let tally = DeliveryCount.tally(records)
        guard !tally.isEmpty else { return }
        let apps = tally.map(\.key.app), statuses = tally.map { Int64($0.key.status) }, reasons = tally.map(\.key.reason)
        let services = tally.map(\.key.service.rawValue)
        let counts = tally.map { Int64($0.value.count) }, retries = tally.map { Int64($0.value.retries) }
        try db.query("""
            INSERT INTO delivery_counters (app, service, status, reason, bucket, count, retries)
            SELECT a, v, s, r, \(counterBucket), c, n
            FROM unnest(\(apps)::text[], \(services)::text[], \(statuses)::bigint[], \(reasons)::text[], \(counts)::bigint[],
                \(retries)::bigint[]) AS x (a, v, s, r, c, n)
            ON CONFLICT (app, service, status, reason, bucket) DO UPDATE SET count = delivery_counters.count + excluded.count,
                retries = delivery_counters.retries + excluded.retries
            """)
    }

    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func recentDeliveries(app: String, limit: Int = 100) throws(StoreError) -> [DeliveryRecord] {
        let limit = Int64(limit)
        return try pool.withConnection { (db) throws(StoreError) -> [DeliveryRecord] in
            let rows = try db.rows("""
                SELECT apns_id, unique_id, token, status::bigint, reason, attempts::bigint, possibly_duplicated,
                    first_attempt_ms, finished_ms, service
                FROM delivery_log WHERE app = \(app) ORDER BY id DESC LIMIT \(limit)
                """, as: (String, String?, String, Int64, String?, Int64, Bool, Int64, Int64, String).self)
            var out: [DeliveryRecord] = []
            for (notificationId, unique, token, status, reason, attempts, dup, first, finished, service) in rows {
                guard let parsed = try? DeviceToken(parsing: token) else { throw StoreError(.corrupt, "delivery log holds an invalid token") }
                out.append(DeliveryRecord(
                    app: app, notificationId: notificationId, uniqueId: unique, token: parsed, status: Int(status), reason: reason,
                    attempts: Int(attempts), possiblyDuplicated: dup, firstAttemptMs: first, finishedMs: finished,
                    service: PushService(rawValue: service) ?? .apns))
            }
            return out
        }
    }
}
