import PushCore

extension Registry {
    /// The broadcast with this id, or nil.
    public func broadcast(id: String) throws(StoreError) -> BroadcastRecord? {
        try read { (db) throws(StoreError) -> BroadcastRecord? in
            let select = try db.statement("SELECT \(Self.broadcastColumns) FROM broadcasts WHERE id = ?1")
            defer { select.reset() }
            try select.bind(1, id)
            return try select.step() ? try Self.broadcast(from: select) : nil
        }
    }

    /// Broadcasts of `app` (any app when nil) in the given states, oldest first.
    public func broadcasts(app: String? = nil, states: [BroadcastState]) throws(StoreError) -> [BroadcastRecord] {
        try read { (db) throws(StoreError) -> [BroadcastRecord] in
            let select = try db.statement(
                "SELECT \(Self.broadcastColumns) FROM broadcasts WHERE (?1 IS NULL OR app = ?1) ORDER BY created_ms, id")
            defer { select.reset() }
            try select.bind(1, app)
            var out: [BroadcastRecord] = []
            while try select.step() {
                let record = try Self.broadcast(from: select)
                if states.contains(record.state) { out.append(record) }
            }
            return out
        }
    }

    /// Stores a new broadcast; with `tokens` it targets exactly those (registered or not) instead of the
    /// app's registry, and the list is stored in the same transaction. Fails with `.constraint` when the id
    /// exists.
    public func createBroadcast(_ record: BroadcastRecord, tokens: [DeviceToken]? = nil) throws(StoreError) {
        let now = nowMs()
        try write { (db) throws(StoreError) in
            if let tokens {
                let add = try db.statement("INSERT OR IGNORE INTO broadcast_tokens (broadcast_id, token) VALUES (?1, ?2)")
                for token in tokens {
                    try add.bind(1, record.id)
                    try add.bind(2, token.hex)
                    try add.run()
                }
            }
            let insert = try db.statement("""
                INSERT INTO broadcasts (id, app, state, payload, push_type, priority, expiration, collapse_id,
                    channel, environment, total, checkpoint, dispatched, created_ms, updated_ms, explicit_tokens)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, '', '', ?12, ?12, ?13)
                """)
            try insert.bind(1, record.id)
            try insert.bind(2, record.app)
            try insert.bind(3, record.state.rawValue)
            try insert.bind(4, String(decoding: record.payload, as: UTF8.self))
            try insert.bind(5, record.pushType.rawValue)
            try insert.bind(6, Int64(record.priority.rawValue))
            try insert.bind(7, record.expiration)
            try insert.bind(8, record.collapseId)
            try insert.bind(9, record.channel)
            try insert.bind(10, record.environment?.rawValue)
            try insert.bind(11, Int64(record.total))
            try insert.bind(12, now)
            try insert.bind(13, Int64(tokens == nil ? 0 : 1))
            try insert.run()
        }
    }

    /// One keyset page of an explicit-token broadcast, with each token's registered environment if any.
    public func broadcastTokens(id: String, after: String, limit: Int) throws(StoreError) -> [(DeviceToken, APNsEnvironment?)] {
        try read { (db) throws(StoreError) -> [(DeviceToken, APNsEnvironment?)] in
            let select = try db.statement("""
                SELECT t.token, d.environment FROM broadcast_tokens t
                JOIN broadcasts b ON b.id = t.broadcast_id
                LEFT JOIN devices d ON d.app = b.app AND d.token = t.token
                WHERE t.broadcast_id = ?1 AND t.token > ?2 ORDER BY t.token LIMIT ?3
                """)
            defer { select.reset() }
            try select.bind(1, id)
            try select.bind(2, after)
            try select.bind(3, Int64(limit))
            var out: [(DeviceToken, APNsEnvironment?)] = []
            while try select.step() {
                out.append((DeviceToken(trustedCanonicalHex: select.text(0)), select.optionalText(1).flatMap(APNsEnvironment.init(rawValue:))))
            }
            return out
        }
    }

    /// How many tokens an explicit-token broadcast targets.
    public func broadcastTokenCount(id: String) throws(StoreError) -> Int {
        try read { (db) throws(StoreError) -> Int in
            let select = try db.statement("SELECT count(*) FROM broadcast_tokens WHERE broadcast_id = ?1")
            defer { select.reset() }
            try select.bind(1, id)
            return try select.step() ? Int(select.int64(0)) : 0
        }
    }

    /// Moves a broadcast to `state` (and sets `total` / `error` when given).
    public func updateBroadcast(id: String, state: BroadcastState, total: Int? = nil, error: String? = nil) throws(StoreError) {
        let now = nowMs()
        try write { (db) throws(StoreError) in
            let update = try db.statement("""
                UPDATE broadcasts SET state = ?2, total = coalesce(?3, total), error = ?4, updated_ms = ?5,
                    finished_ms = CASE WHEN ?2 IN ('completed', 'failed') THEN ?5 ELSE finished_ms END
                WHERE id = ?1
                """)
            try update.bind(1, id)
            try update.bind(2, state.rawValue)
            try update.bind(3, total.map(Int64.init))
            try update.bind(4, error)
            try update.bind(5, now)
            try update.run()
        }
    }

    /// Records, before they are sent, that tokens up to `token` (hex) are being handed to the sender.
    public func markDispatched(id: String, through token: String) throws(StoreError) {
        try write { (db) throws(StoreError) in
            let update = try db.statement("UPDATE broadcasts SET dispatched = max(dispatched, ?2) WHERE id = ?1")
            try update.bind(1, id)
            try update.bind(2, token)
            try update.run()
        }
    }

    /// After a graceful stop, lowers the dispatch mark to what was really sent (the mark written before
    /// each page is conservative: a crash may leave it up to a page ahead).
    public func settleDispatched(id: String, to token: String) throws(StoreError) {
        try write { (db) throws(StoreError) in
            let update = try db.statement("UPDATE broadcasts SET dispatched = max(checkpoint, ?2) WHERE id = ?1")
            try update.bind(1, id)
            try update.bind(2, token)
            try update.run()
        }
    }

    /// Commits final outcomes, their delivery-log rows and the new checkpoint in ONE transaction, so a
    /// crash never leaves a checkpoint ahead of the outcomes it covers. Re-recording a token (the in-flight
    /// window of an interrupted run) replaces its earlier outcome: each token keeps exactly one.
    public func recordBroadcastOutcomes(
        id: String, outcomes: [BroadcastOutcome], deliveries: [DeliveryRecord], checkpoint: String?
    ) throws(StoreError) {
        let now = nowMs()
        try write { (db) throws(StoreError) in
            let insert = try db.statement("""
                INSERT OR REPLACE INTO broadcast_outcomes
                    (broadcast_id, token, kind, status, reason, attempts, pruned, possibly_duplicated)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
                """)
            for o in outcomes {
                try insert.bind(1, id)
                try insert.bind(2, o.token.hex)
                try insert.bind(3, o.kind)
                try insert.bind(4, Int64(o.status))
                try insert.bind(5, o.reason)
                try insert.bind(6, Int64(o.attempts))
                try insert.bind(7, Int64(o.pruned ? 1 : 0))
                try insert.bind(8, Int64(o.possiblyDuplicated ? 1 : 0))
                try insert.run()
            }
            if !deliveries.isEmpty { try Self.insertDeliveries(deliveries, in: db) }
            let update = try db.statement(
                "UPDATE broadcasts SET checkpoint = max(checkpoint, coalesce(?2, checkpoint)), updated_ms = ?3 WHERE id = ?1")
            try update.bind(1, id)
            try update.bind(2, checkpoint)
            try update.bind(3, now)
            try update.run()
        }
    }

    /// Tokens (hex) with a recorded outcome in (`after`, `through`]: skipped when a broadcast resumes.
    public func broadcastOutcomeTokens(id: String, after: String, through: String) throws(StoreError) -> Set<String> {
        try read { (db) throws(StoreError) -> Set<String> in
            let select = try db.statement(
                "SELECT token FROM broadcast_outcomes WHERE broadcast_id = ?1 AND token > ?2 AND token <= ?3")
            defer { select.reset() }
            try select.bind(1, id)
            try select.bind(2, after)
            try select.bind(3, through)
            var out = Set<String>()
            while try select.step() { out.insert(select.text(0)) }
            return out
        }
    }

    /// Totals over every recorded outcome of a broadcast.
    public func broadcastCounts(id: String) throws(StoreError) -> BroadcastCounts {
        try read { (db) throws(StoreError) -> BroadcastCounts in
            let select = try db.statement("""
                SELECT kind, coalesce(reason, kind), count(*), sum(pruned), sum(attempts > 1), sum(possibly_duplicated)
                FROM broadcast_outcomes WHERE broadcast_id = ?1 GROUP BY 1, 2
                """)
            defer { select.reset() }
            try select.bind(1, id)
            var counts = BroadcastCounts()
            while try select.step() {
                let n = Int(select.int64(2))
                counts.done += n
                counts.pruned += Int(select.int64(3))
                counts.retried += Int(select.int64(4))
                counts.possiblyDuplicated += Int(select.int64(5))
                if select.text(0) == "accepted" {
                    counts.accepted += n
                } else {
                    counts.notAcceptedByReason[select.text(1), default: 0] += n
                }
            }
            return counts
        }
    }

    static let broadcastColumns = """
        id, app, state, payload, push_type, priority, expiration, collapse_id, channel, environment, total,
        checkpoint, dispatched, error, created_ms, updated_ms, finished_ms, explicit_tokens
        """

    static func broadcast(from row: Statement) throws(StoreError) -> BroadcastRecord {
        guard let state = BroadcastState(rawValue: row.text(2)), let pushType = PushType(rawValue: row.text(4)),
            let priority = PushPriority(rawValue: Int(row.int64(5)))
        else { throw StoreError(.corrupt, "broadcast \(row.text(0)) has an unreadable state, push type or priority") }
        return BroadcastRecord(
            id: row.text(0), app: row.text(1), state: state, payload: Array(row.text(3).utf8), pushType: pushType,
            priority: priority, expiration: row.optionalInt64(6), collapseId: row.optionalText(7),
            channel: row.optionalText(8), environment: row.optionalText(9).flatMap(APNsEnvironment.init(rawValue:)),
            total: Int(row.int64(10)), checkpoint: row.text(11), dispatched: row.text(12), error: row.optionalText(13),
            createdMs: row.int64(14), updatedMs: row.int64(15), finishedMs: row.optionalInt64(16))
            .with { $0.explicitTokens = row.int64(17) != 0 }
    }
}

extension BroadcastRecord {
    fileprivate func with(_ change: (inout BroadcastRecord) -> Void) -> BroadcastRecord {
        var copy = self
        change(&copy)
        return copy
    }
}
