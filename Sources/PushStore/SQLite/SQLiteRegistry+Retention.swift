import PushCore

/// History retention on SQLite (see ``RegistryStore/trimHistory(before:batchSize:)``; the pass is
/// ``HistoryTrimming/retentionPass(before:batchSize:)``). Each batch is its own short write transaction, so registrations and outcome commits wait
/// for at most one batch. The pages freed go to SQLite's free list and are reused by later inserts, so the file
/// stops growing once the retention window is full (no VACUUM; the file format, `auto_vacuum` included, is
/// unchanged).
extension SQLiteRegistry: HistoryTrimming {
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func trimHistory(before cutoffMs: Int64, batchSize: Int) throws(StoreError) -> RetentionReport {
        try retentionPass(before: cutoffMs, batchSize: batchSize)
    }

    func trimLogBatch(table: String, time: String, before cutoffMs: Int64, batch: Int64) throws(StoreError) -> Int {
        try write { (db) throws(StoreError) -> Int in
            let delete = try db.statement("""
                DELETE FROM \(table) WHERE id IN (
                    SELECT id FROM (SELECT id, \(time) AS t FROM \(table) ORDER BY id LIMIT ?2) WHERE t < ?1)
                """)
            try delete.bind(1, cutoffMs)
            try delete.bind(2, batch)
            try delete.run()
            return db.changes
        }
    }

    func broadcastsFinished(before cutoffMs: Int64) throws(StoreError) -> [String] {
        try read { (db) throws(StoreError) -> [String] in
            let select = try db.statement(
                "SELECT id FROM broadcasts WHERE state IN (\(StateSQL.ended)) AND finished_ms < ?1 ORDER BY finished_ms")
            defer { select.reset() }
            try select.bind(1, cutoffMs)
            var ids: [String] = []
            while try select.step() { ids.append(select.text(0)) }
            return ids
        }
    }

    func trimBroadcastBatch(table: String, id: String, before cutoffMs: Int64, batch: Int64) throws(StoreError) -> Int {
        try write { (db) throws(StoreError) -> Int in
            let delete = try db.statement("""
                DELETE FROM \(table) WHERE broadcast_id = ?1
                    AND token IN (SELECT token FROM \(table) WHERE broadcast_id = ?1\(Self.keptKindsFilter(table)) ORDER BY token LIMIT ?2)
                    AND EXISTS (SELECT 1 FROM broadcasts WHERE id = ?1 AND state IN (\(StateSQL.ended)) AND finished_ms < ?3)
                """)
            try delete.bind(1, id)
            try delete.bind(2, batch)
            try delete.bind(3, cutoffMs)
            try delete.run()
            return db.changes
        }
    }
}
