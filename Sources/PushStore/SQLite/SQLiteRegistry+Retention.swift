import PushCore

/// History retention on SQLite (see ``RegistryStore/trimHistory(before:batchSize:)``). Each batch is its own
/// short write transaction, so registrations and outcome commits wait for at most one batch. The pages freed
/// go to SQLite's free list and are reused by later inserts, so the file stops growing once the retention
/// window is full (no VACUUM; the file format, `auto_vacuum` included, is unchanged).
extension SQLiteRegistry {
    public func trimHistory(before cutoffMs: Int64, batchSize: Int) throws(StoreError) -> RetentionReport {
        let batch = Int64(max(1, batchSize))
        var report = RetentionReport(cutoffMs: cutoffMs)
        report.deliveries = try trimOldest(table: "delivery_log", time: "finished_ms", before: cutoffMs, batch: batch)
        report.prunes = try trimOldest(table: "prune_log", time: "at_ms", before: cutoffMs, batch: batch)
        let finished = try read { (db) throws(StoreError) -> [String] in
            let select = try db.statement(
                "SELECT id FROM broadcasts WHERE state IN ('completed', 'cancelled') AND finished_ms < ?1 ORDER BY finished_ms")
            defer { select.reset() }
            try select.bind(1, cutoffMs)
            var ids: [String] = []
            while try select.step() { ids.append(select.text(0)) }
            return ids
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

    /// Deletes rows of an append-only log older than `cutoffMs`, oldest ids first, `batch` rows per transaction:
    /// each batch looks at the `batch` lowest ids (the rowid B-tree, no index needed) and deletes those older
    /// than the cutoff; it stops at a window holding none. Ids follow insertion, so times are nearly in id
    /// order; a row inserted late with an older time waits for a later pass.
    private func trimOldest(table: String, time: String, before cutoffMs: Int64, batch: Int64) throws(StoreError) -> Int {
        var deleted = 0
        while true {
            let n = try write { (db) throws(StoreError) -> Int in
                let delete = try db.statement("""
                    DELETE FROM \(table) WHERE id IN (
                        SELECT id FROM (SELECT id, \(time) AS t FROM \(table) ORDER BY id LIMIT ?2) WHERE t < ?1)
                    """)
                try delete.bind(1, cutoffMs)
                try delete.bind(2, batch)
                try delete.run()
                return db.changes
            }
            deleted += n
            if n == 0 { return deleted }
        }
    }

    /// Deletes a completed broadcast's per-device rows of `table`, `batch` per transaction, each batch only
    /// while the broadcast is still completed before the cutoff (a new round started meanwhile keeps them).
    /// Deferred and pending outcome rows stay (``HistoryRetention/keptOutcomeKinds``): a later run of the same id
    /// retries them, and its counters say how many there are.
    private func trimBroadcastRows(table: String, id: String, before cutoffMs: Int64, batch: Int64) throws(StoreError) -> Int {
        let kept = table == "broadcast_outcomes" ? " AND kind NOT IN (\(HistoryRetention.keptOutcomeKindsSQL))" : ""
        var deleted = 0
        while true {
            let n = try write { (db) throws(StoreError) -> Int in
                let delete = try db.statement("""
                    DELETE FROM \(table) WHERE broadcast_id = ?1
                        AND token IN (SELECT token FROM \(table) WHERE broadcast_id = ?1\(kept) ORDER BY token LIMIT ?2)
                        AND EXISTS (SELECT 1 FROM broadcasts WHERE id = ?1 AND state IN ('completed', 'cancelled') AND finished_ms < ?3)
                    """)
                try delete.bind(1, id)
                try delete.bind(2, batch)
                try delete.bind(3, cutoffMs)
                try delete.run()
                return db.changes
            }
            deleted += n
            if n < batch { return deleted }
        }
    }
}
