import PostgresNIO
import PushCore

/// History retention on PostgreSQL (see ``RegistryStore/trimHistory(before:batchSize:)``): every batch is one
/// statement in its own short transaction. The space of deleted rows is reclaimed for new ones by
/// (auto)vacuum, as for any table with deletes.
extension PostgresRegistry {
    public func trimHistory(before cutoffMs: Int64, batchSize: Int) throws(StoreError) -> RetentionReport {
        let batch = Int64(max(1, batchSize))
        var report = RetentionReport(cutoffMs: cutoffMs)
        report.deliveries = try trimOldest(table: "delivery_log", time: "finished_ms", before: cutoffMs, batch: batch)
        report.prunes = try trimOldest(table: "prune_log", time: "at_ms", before: cutoffMs, batch: batch)
        let finished = try pool.withConnection { (db) throws(StoreError) -> [String] in
            try db.rows("""
                SELECT id FROM broadcasts WHERE state IN ('completed', 'cancelled') AND finished_ms < \(cutoffMs) ORDER BY finished_ms
                """, as: (String).self)
        }
        for id in finished {
            let outcomes = try trimBroadcastRows(table: "broadcast_outcomes", id: id, before: cutoffMs, batch: batch)
            let tokens = try trimBroadcastRows(table: "broadcast_tokens", id: id, before: cutoffMs, batch: batch)
            report.outcomes += outcomes
            report.jobTokens += tokens
            if outcomes + tokens > 0 { report.broadcasts += 1 }
        }
        return report
    }

    /// Deletes log rows older than `cutoffMs` among the `batch` lowest ids (through the primary key), one
    /// statement per batch, until a window holds none (as on SQLite).
    private func trimOldest(table: String, time: String, before cutoffMs: Int64, batch: Int64) throws(StoreError) -> Int {
        let sql = """
            DELETE FROM \(table) WHERE id IN (
                SELECT id FROM (SELECT id, \(time) AS t FROM \(table) ORDER BY id LIMIT $2) w WHERE t < $1)
            """
        var deleted = 0
        while true {
            var binds = PostgresBindings()
            binds.append(cutoffMs)
            binds.append(batch)
            let n = try pool.withConnection { (db) throws(StoreError) -> Int in
                try db.changes(PostgresQuery(unsafeSQL: sql, binds: binds))
            }
            deleted += n
            if n == 0 { return deleted }
        }
    }

    /// Deletes a completed broadcast's per-device rows of `table`, `batch` per statement, each only while the
    /// broadcast is still completed before the cutoff (a new round started meanwhile keeps them).
    /// Deferred and pending outcome rows stay (``HistoryRetention/keptOutcomeKinds``).
    private func trimBroadcastRows(table: String, id: String, before cutoffMs: Int64, batch: Int64) throws(StoreError) -> Int {
        let kept = table == "broadcast_outcomes" ? " AND kind NOT IN (\(HistoryRetention.keptOutcomeKindsSQL))" : ""
        let sql = """
            DELETE FROM \(table) WHERE broadcast_id = $1
                AND token IN (SELECT token FROM \(table) WHERE broadcast_id = $1\(kept) ORDER BY token LIMIT $2)
                AND EXISTS (SELECT 1 FROM broadcasts WHERE id = $1 AND state IN ('completed', 'cancelled') AND finished_ms < $3)
            """
        var deleted = 0
        while true {
            var binds = PostgresBindings()
            binds.append(id)
            binds.append(batch)
            binds.append(cutoffMs)
            let n = try pool.withConnection { (db) throws(StoreError) -> Int in
                try db.changes(PostgresQuery(unsafeSQL: sql, binds: binds))
            }
            deleted += n
            if n < batch { return deleted }
        }
    }
}
