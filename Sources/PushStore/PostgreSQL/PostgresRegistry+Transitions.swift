import PostgresNIO
import PushCore

/// What a broadcast event needs loaded, and storing what ``BroadcastRecord/after(_:now:)`` decides: the PostgreSQL
/// half of the state machine (the twin of `SQLiteRegistry+Transitions.swift`). Callers hold the broadcast row
/// (`FOR UPDATE`) from loading it until this transaction commits, so the result is stored over what was loaded.
extension PostgresRegistry {
    /// The broadcast's shards that are not done (a new snapshot: every shard committed before this statement).
    func shardsLeft(id: String, in db: PostgresSession) throws(StoreError) -> Int {
        let left = try db.row("SELECT count(*)::bigint FROM broadcast_shards WHERE broadcast_id = \(id) AND state <> 'done'", as: (Int64).self)
        return Int(left ?? 0)
    }

    /// True when a claim on one of the broadcast's shards is live at `now` (``ShardLease``).
    func hasLiveLease(id: String, now nowMs: Int64, in db: PostgresSession) throws(StoreError) -> Bool {
        try db.row("""
            SELECT EXISTS (SELECT 1 FROM broadcast_shards WHERE broadcast_id = \(id) AND \(unescaped: StateSQL.liveClaim(now: String(nowMs))))
            """, as: (Bool).self) ?? false
    }

    /// Writes `change` (nothing when nil) to broadcast `id`; a completing change stores the total from the
    /// broadcast's counters (``BroadcastChange/total(from:)``).
    func store(_ change: BroadcastChange?, id: String, in db: PostgresSession) throws(StoreError) {
        guard let change else { return }
        let total = change.completes ? Int64(BroadcastChange.total(from: try broadcastCounts(id: id, in: db))) : nil
        let (state, error, updated, finished) = (change.state.rawValue, change.error, change.updatedMs, change.finishedMs)
        try db.query("""
            UPDATE broadcasts SET state = \(state), error = \(error), updated_ms = \(updated), finished_ms = \(finished),
                total = coalesce(\(total)::bigint, total)
            WHERE id = \(id)
            """)
    }
}
