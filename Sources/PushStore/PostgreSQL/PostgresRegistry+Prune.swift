import PostgresNIO
import PushCore

/// Pruning tokens APNs called dead, and the prune log. (The twin of `SQLiteRegistry+Prune.swift`.)
extension PostgresRegistry {
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    @discardableResult
    public func prune(app: String, token: DeviceToken, _ request: PruneRequest) throws(StoreError) -> PruneOutcome {
        try PruneGate.check(request)
        return try pool.transaction { (db) throws(StoreError) -> PruneOutcome in
            try prune(app: app, token: token, request, in: db)
        }
    }

    func prune(app: String, token: DeviceToken, _ request: PruneRequest, in db: PostgresSession) throws(StoreError) -> PruneOutcome {
        let (reason, apnsTimestampMs) = (request.reason, request.apnsTimestampMs)
        let keep: Bool, lastRegisteredMs: Int64, service: String
        if let row = try find(app: app, token: token, lock: true, in: db) {
            keep = PruneGate.keeps(request, lastRegisteredMs: row.lastRegisteredMs)
            lastRegisteredMs = row.lastRegisteredMs
            service = row.service
            if !keep { try db.query("DELETE FROM devices WHERE id = \(row.id)") }
        } else if let la = try pruneLiveActivityToken(app: app, token: token, request, in: db) {
            (keep, lastRegisteredMs) = la
            service = PushService.apns.rawValue  // Live Activity tokens are APNs'
        } else {
            return .notFound
        }
        let (hex, action, reasonText, counterReason) = (token.hex, PruneGate.action(keep: keep), reason, PruneGate.counterReason(request))
        try db.query("""
            INSERT INTO prune_log (app, token, reason, action, apns_timestamp_ms, last_registered_ms, at_ms)
            VALUES (\(app), \(hex), \(reasonText), \(action), \(apnsTimestampMs), \(lastRegisteredMs), coalesce(\(now)::bigint, pp_now_ms()))
            """)
        try db.query("""
            INSERT INTO prune_counters (app, service, reason, action, bucket, count)
            VALUES (\(app), \(service), \(counterReason), \(action), \(counterBucket), 1)
            ON CONFLICT (app, service, reason, action, bucket) DO UPDATE SET count = prune_counters.count + 1
            """)
        return PruneGate.outcome(keep: keep)
    }

    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func pruneLog(app: String, limit: Int = 100) throws(StoreError) -> [PruneLogEntry] {
        let limit = Int64(limit)
        return try pool.withConnection { (db) throws(StoreError) -> [PruneLogEntry] in
            let rows = try db.rows("""
                SELECT token, reason, action, apns_timestamp_ms, last_registered_ms, at_ms FROM prune_log
                WHERE app = \(app) ORDER BY id DESC LIMIT \(limit)
                """, as: (String, String, String, Int64?, Int64?, Int64).self)
            var entries: [PruneLogEntry] = []
            for (token, reason, action, apnsMs, lastMs, atMs) in rows {
                guard let parsed = try? DeviceToken(parsing: token) else { throw StoreError(.corrupt, "prune log holds an invalid token") }
                entries.append(PruneLogEntry(
                    app: app, token: parsed, reason: reason,
                    outcome: action == "deleted" ? .deleted : .skippedNewerRegistration,
                    apnsTimestampMs: apnsMs, lastRegisteredMs: lastMs, atMs: atMs))
            }
            return entries
        }
    }
}
