import PushCore

extension SQLiteRegistry {
    /// The broadcast with this id, or nil.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func broadcast(id: String) throws(StoreError) -> BroadcastRecord? {
        try read { (db) throws(StoreError) -> BroadcastRecord? in try Self.broadcast(id: id, in: db) }
    }

    static func broadcast(id: String, in db: Connection) throws(StoreError) -> BroadcastRecord? {
        let select = try db.statement("SELECT \(broadcastColumns) FROM broadcasts WHERE id = ?1")
        defer { select.reset() }
        try select.bind(1, id)
        return try select.step() ? try broadcast(from: select) : nil
    }

    /// Broadcasts of `app` (any app when nil) in the given states, oldest first.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
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
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func createBroadcast(_ record: BroadcastRecord, tokens: [DeviceToken]? = nil) throws(StoreError) {
        let now = nowMs()
        try write { (db) throws(StoreError) in try Self.insertBroadcast(record, tokens: tokens, now: now, in: db) }
    }

    /// The body of ``createBroadcast(_:tokens:)`` (the caller owns the transaction).
    static func insertBroadcast(_ record: BroadcastRecord, tokens: [DeviceToken]?, now: Int64, in db: Connection) throws(StoreError) {
        do {
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
                    channel, environment, total, created_ms, updated_ms, explicit_tokens, scheduled_ms, targeting)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?12, ?13, ?14, ?15)
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
            try insert.bind(14, record.scheduledMs)
            try insert.bind(15, record.targeting?.storedText)
            try insert.run()
        }
    }

    /// The broadcast's counters, summed over its shards.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func broadcastCounts(id: String) throws(StoreError) -> BroadcastCounts {
        try read { (db) throws(StoreError) -> BroadcastCounts in try Self.broadcastCounts(id: id, in: db) }
    }

    static func broadcastCounts(id: String, in db: Connection) throws(StoreError) -> BroadcastCounts {
        let select = try db.statement("""
            SELECT kind, reason, sum(devices), sum(retried), sum(possibly_duplicated), sum(pruned)
            FROM broadcast_counts WHERE broadcast_id = ?1 GROUP BY 1, 2
            """)
        defer { select.reset() }
        try select.bind(1, id)
        var counts = BroadcastCounts()
        while try select.step() {
            guard let kind = DeliveryOutcome.Kind(rawValue: select.text(0)) else {
                throw StoreError(.corrupt, "broadcast \(id) has counts of an unknown kind \(select.text(0))")
            }
            counts.add(
                kind: kind, reason: select.text(1), devices: Int(select.int64(2)), retried: Int(select.int64(3)),
                possiblyDuplicated: Int(select.int64(4)), pruned: Int(select.int64(5)))
        }
        return counts
    }

    static let broadcastColumns = """
        id, app, state, payload, push_type, priority, expiration, collapse_id, channel, environment, total,
        error, created_ms, updated_ms, finished_ms, explicit_tokens, run, scheduled_ms, targeting
        """

    static func broadcast(from row: Statement) throws(StoreError) -> BroadcastRecord {
        guard let state = BroadcastState(rawValue: row.text(2)), let pushType = PushType(rawValue: row.text(4)),
            let priority = PushPriority(rawValue: Int(row.int64(5)))
        else { throw StoreError(.corrupt, "broadcast \(row.text(0)) has an unreadable state, push type or priority") }
        var record = BroadcastRecord(
            id: row.text(0), app: row.text(1), state: state, payload: Array(row.text(3).utf8), pushType: pushType,
            priority: priority, expiration: row.optionalInt64(6), collapseId: row.optionalText(7),
            channel: row.optionalText(8), environment: row.optionalText(9).flatMap(APNsEnvironment.init(rawValue:)),
            total: Int(row.int64(10)), error: row.optionalText(11),
            createdMs: row.int64(12), updatedMs: row.int64(13), finishedMs: row.optionalInt64(14))
        record.explicitTokens = row.int64(15) != 0
        record.run = Int(row.int64(16))
        record.scheduledMs = row.optionalInt64(17)
        do { record.targeting = try JobTargeting.parse(stored: row.optionalText(18)) } catch {
            throw StoreError(.corrupt, "broadcast \(row.text(0)): \(error.message)")
        }
        return record
    }
}
