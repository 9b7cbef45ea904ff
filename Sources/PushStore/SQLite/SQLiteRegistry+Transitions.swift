import PushCore

/// What a broadcast event needs loaded, and storing what ``BroadcastRecord/after(_:now:)`` decides: the SQLite half
/// of the state machine (the twin of `PostgresRegistry+Transitions.swift`). Called inside a write transaction, so
/// what is loaded cannot change before the result is stored.
extension SQLiteRegistry {
    /// The broadcast's shards that are not done.
    static func shardsLeft(id: String, in db: Connection) throws(StoreError) -> Int {
        Int(try scalar("SELECT count(*) FROM broadcast_shards WHERE broadcast_id = ?1 AND state <> 'done'", id, in: db))
    }

    /// True when a claim on one of the broadcast's shards is live at `now` (``ShardLease``).
    static func hasLiveLease(id: String, now: Int64, in db: Connection) throws(StoreError) -> Bool {
        let select = try db.statement(
            "SELECT EXISTS (SELECT 1 FROM broadcast_shards WHERE broadcast_id = ?1 AND \(StateSQL.liveClaim(now: "?2")))")
        defer { select.reset() }
        try select.bind(1, id)
        try select.bind(2, now)
        return try select.step() && select.int64(0) != 0
    }

    /// Writes `change` (nothing when nil) to broadcast `id`; a completing change stores the total from the
    /// broadcast's counters (``BroadcastChange/total(from:)``).
    static func store(_ change: BroadcastChange?, id: String, in db: Connection) throws(StoreError) {
        guard let change else { return }
        let total = change.completes ? Int64(BroadcastChange.total(from: try broadcastCounts(id: id, in: db))) : nil
        let update = try db.statement("""
            UPDATE broadcasts SET state = ?2, error = ?3, updated_ms = ?4, finished_ms = ?5, total = coalesce(?6, total)
            WHERE id = ?1
            """)
        try update.bind(1, id)
        try update.bind(2, change.state.rawValue)
        try update.bind(3, change.error)
        try update.bind(4, change.updatedMs)
        try update.bind(5, change.finishedMs)
        try update.bind(6, total)
        try update.run()
    }
}
