import PostgresNIO
import PushCore

/// History retention on PostgreSQL (see ``RegistryStore/trimHistory(before:batchSize:)``; the pass is
/// ``HistoryTrimming/retentionPass(before:batchSize:)``): every batch is one statement in its own short transaction. The space of deleted rows is
/// reclaimed for new ones by (auto)vacuum, as for any table with deletes.
extension PostgresRegistry: HistoryTrimming {
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func trimHistory(before cutoffMs: Int64, batchSize: Int) throws(StoreError) -> RetentionReport {
        try retentionPass(before: cutoffMs, batchSize: batchSize)
    }

    func trimLogBatch(table: String, time: String, before cutoffMs: Int64, batch: Int64) throws(StoreError) -> Int {
        var binds = PostgresBindings()
        binds.append(cutoffMs)
        binds.append(batch)
        let sql = """
            DELETE FROM \(table) WHERE id IN (
                SELECT id FROM (SELECT id, \(time) AS t FROM \(table) ORDER BY id LIMIT $2) w WHERE t < $1)
            """
        return try pool.withConnection { (db) throws(StoreError) -> Int in try db.changes(PostgresQuery(unsafeSQL: sql, binds: binds)) }
    }

    func broadcastsFinished(before cutoffMs: Int64) throws(StoreError) -> [String] {
        try pool.withConnection { (db) throws(StoreError) -> [String] in
            try db.rows("""
                SELECT id FROM broadcasts WHERE state IN (\(unescaped: StateSQL.ended)) AND finished_ms < \(cutoffMs) ORDER BY finished_ms
                """, as: (String).self)
        }
    }

    func trimBroadcastBatch(table: String, id: String, before cutoffMs: Int64, batch: Int64) throws(StoreError) -> Int {
        var binds = PostgresBindings()
        binds.append(id)
        binds.append(batch)
        binds.append(cutoffMs)
        let sql = """
            DELETE FROM \(table) WHERE broadcast_id = $1
                AND token IN (SELECT token FROM \(table) WHERE broadcast_id = $1\(Self.keptKindsFilter(table)) ORDER BY token LIMIT $2)
                AND EXISTS (SELECT 1 FROM broadcasts WHERE id = $1 AND state IN (\(StateSQL.ended)) AND finished_ms < $3)
            """
        return try pool.withConnection { (db) throws(StoreError) -> Int in try db.changes(PostgresQuery(unsafeSQL: sql, binds: binds)) }
    }
}
