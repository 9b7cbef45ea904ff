import PushCore

/// What a backend provides so that history retention's pass is written once (``retentionPass(before:batchSize:)``):
/// three single statements, each its own short transaction. The backends differ only in their SQL.
protocol HistoryTrimming {
    /// Deletes rows of an append-only log (`delivery_log`, `prune_log`) older than `cutoffMs` among the `batch`
    /// lowest ids (the primary key: no index on the time needed); returns how many.
    func trimLogBatch(table: String, time: String, before cutoffMs: Int64, batch: Int64) throws(StoreError) -> Int

    /// Broadcasts completed or cancelled before `cutoffMs`, oldest first.
    func broadcastsFinished(before cutoffMs: Int64) throws(StoreError) -> [String]

    /// Deletes up to `batch` of broadcast `id`'s per-device rows of `table` (lowest tokens first), only while the
    /// broadcast is still finished before the cutoff (a new round started meanwhile keeps them); deferred and
    /// pending outcome rows stay (``HistoryRetention/keptOutcomeKinds``). Returns how many.
    func trimBroadcastBatch(table: String, id: String, before cutoffMs: Int64, batch: Int64) throws(StoreError) -> Int
}

extension HistoryTrimming {
    /// The retention pass (see ``RegistryStore/trimHistory(before:batchSize:)``): the logs oldest ids first until a
    /// window holds nothing old enough (ids follow insertion, so times are nearly in id order; a row inserted late
    /// with an older time waits for a later pass), then each finished broadcast's per-device rows.
    func retentionPass(before cutoffMs: Int64, batchSize: Int) throws(StoreError) -> RetentionReport {
        let batch = Int64(max(1, batchSize))
        var report = RetentionReport(cutoffMs: cutoffMs)
        report.deliveries = try trimLog(table: "delivery_log", time: "finished_ms", before: cutoffMs, batch: batch)
        report.prunes = try trimLog(table: "prune_log", time: "at_ms", before: cutoffMs, batch: batch)
        for id in try broadcastsFinished(before: cutoffMs) {
            let outcomes = try trimBroadcast(table: "broadcast_outcomes", id: id, before: cutoffMs, batch: batch)
            let tokens = try trimBroadcast(table: "broadcast_tokens", id: id, before: cutoffMs, batch: batch)
            report.outcomes += outcomes
            report.jobTokens += tokens
            if outcomes + tokens > 0 { report.broadcasts += 1 }
        }
        return report
    }

    private func trimLog(table: String, time: String, before cutoffMs: Int64, batch: Int64) throws(StoreError) -> Int {
        var deleted = 0
        while true {
            let n = try trimLogBatch(table: table, time: time, before: cutoffMs, batch: batch)
            deleted += n
            if n == 0 { return deleted }
        }
    }

    private func trimBroadcast(table: String, id: String, before cutoffMs: Int64, batch: Int64) throws(StoreError) -> Int {
        var deleted = 0
        while true {
            let n = try trimBroadcastBatch(table: table, id: id, before: cutoffMs, batch: batch)
            deleted += n
            if n < batch { return deleted }
        }
    }

    /// ` AND kind NOT IN (…)` for `broadcast_outcomes` (the kinds retention keeps), else nothing.
    static func keptKindsFilter(_ table: String) -> String {
        table == "broadcast_outcomes" ? " AND kind NOT IN (\(HistoryRetention.keptOutcomeKindsSQL))" : ""
    }
}
