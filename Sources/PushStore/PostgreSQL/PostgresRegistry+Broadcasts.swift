import NIOCore
import PostgresNIO
import PushCore

extension PostgresRegistry {
    static let broadcastColumns = """
        id, app, state, payload, push_type, priority::bigint, expiration, collapse_id, channel, environment, total,
        error, created_ms, updated_ms, finished_ms, explicit_tokens, run::bigint, scheduled_ms, targeting
        """

    typealias BroadcastRow = (
        String, String, String, ByteBuffer, String, Int64, Int64?, String?, String?, String?, Int64,
        String?, Int64, Int64, Int64?, Bool, Int64, Int64?, String?
    )

    static func broadcast(_ row: BroadcastRow) throws(StoreError) -> BroadcastRecord {
        guard let state = BroadcastState(rawValue: row.2), let pushType = PushType(rawValue: row.4),
            let priority = PushPriority(rawValue: Int(row.5))
        else { throw StoreError(.corrupt, "broadcast \(row.0) has an unreadable state, push type or priority") }
        var record = BroadcastRecord(
            id: row.0, app: row.1, state: state, payload: Array(row.3.readableBytesView), pushType: pushType, priority: priority,
            expiration: row.6, collapseId: row.7, channel: row.8, environment: row.9.flatMap(APNsEnvironment.init(rawValue:)),
            total: Int(row.10), error: row.11, createdMs: row.12, updatedMs: row.13, finishedMs: row.14)
        record.explicitTokens = row.15
        record.run = Int(row.16)
        record.scheduledMs = row.17
        do { record.targeting = try JobTargeting.parse(stored: row.18) } catch {
            throw StoreError(.corrupt, "broadcast \(row.0): \(error.message)")
        }
        return record
    }

    func broadcast(id: String, in db: PostgresSession, lock: Bool = false) throws(StoreError) -> BroadcastRecord? {
        let sql = "SELECT \(Self.broadcastColumns) FROM broadcasts WHERE id = $1" + (lock ? " FOR UPDATE" : "")
        guard let row = try db.row(PostgresQuery(unsafeSQL: sql, binds: Self.binds(id)), as: BroadcastRow.self) else { return nil }
        return try Self.broadcast(row)
    }

    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func broadcast(id: String) throws(StoreError) -> BroadcastRecord? {
        try pool.withConnection { (db) throws(StoreError) -> BroadcastRecord? in try broadcast(id: id, in: db) }
    }

    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func broadcasts(app: String? = nil, states: [BroadcastState]) throws(StoreError) -> [BroadcastRecord] {
        try pool.withConnection { (db) throws(StoreError) -> [BroadcastRecord] in
            var binds = PostgresBindings()
            binds.append(app)
            binds.append(states.map(\.rawValue))
            let sql = """
                SELECT \(Self.broadcastColumns) FROM broadcasts WHERE ($1::text IS NULL OR app = $1) AND state = ANY($2::text[])
                ORDER BY created_ms, id
                """
            var out: [BroadcastRecord] = []
            for row in try db.rows(PostgresQuery(unsafeSQL: sql, binds: binds), as: BroadcastRow.self) {
                out.append(try Self.broadcast(row))
            }
            return out
        }
    }

    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func createBroadcast(_ record: BroadcastRecord, tokens: [DeviceToken]? = nil) throws(StoreError) {
        try pool.transaction { (db) throws(StoreError) in try insertBroadcast(record, tokens: tokens, in: db) }
    }

    /// The body of ``createBroadcast(_:tokens:)`` (the caller owns the transaction).
    func insertBroadcast(_ record: BroadcastRecord, tokens: [DeviceToken]?, in db: PostgresSession) throws(StoreError) {
        do {
            let (id, app, state, payload, pushType) = (record.id, record.app, record.state.rawValue, ByteBuffer(bytes: record.payload), record.pushType.rawValue)
            let (priority, environment, total) = (Int64(record.priority.rawValue), record.environment?.rawValue, Int64(record.total))
            try db.query("""
                INSERT INTO broadcasts (id, app, state, payload, push_type, priority, expiration, collapse_id, channel,
                    environment, total, created_ms, updated_ms, explicit_tokens, scheduled_ms, targeting)
                SELECT \(id), \(app), \(state), \(payload), \(pushType), \(priority), \(record.expiration),
                    \(record.collapseId), \(record.channel), \(environment), \(total), n.ms, n.ms, \(tokens != nil),
                    \(record.scheduledMs), \(record.targeting?.storedText)
                FROM (SELECT coalesce(\(now)::bigint, pp_now_ms()) AS ms) n
                """)
            if let tokens, !tokens.isEmpty {
                let hexes = tokens.map(\.hex)
                try db.query("""
                    INSERT INTO broadcast_tokens (broadcast_id, token) SELECT \(id), t FROM unnest(\(hexes)::text[]) AS t
                    ON CONFLICT DO NOTHING
                    """)
            }
        }
    }

    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func broadcastCounts(id: String) throws(StoreError) -> BroadcastCounts {
        try pool.withConnection { (db) throws(StoreError) -> BroadcastCounts in try broadcastCounts(id: id, in: db) }
    }

    /// The broadcast's counters, summed over its shards, inside the caller's session.
    func broadcastCounts(id: String, in db: PostgresSession) throws(StoreError) -> BroadcastCounts {
        let rows = try db.rows("""
            SELECT kind, reason, sum(devices)::bigint, sum(retried)::bigint, sum(possibly_duplicated)::bigint,
                sum(pruned)::bigint
            FROM broadcast_counts WHERE broadcast_id = \(id) GROUP BY 1, 2
            """, as: (String, String, Int64, Int64, Int64, Int64).self)
        var counts = BroadcastCounts()
        for (kind, reason, devices, retried, dup, pruned) in rows {
            guard let k = DeliveryOutcome.Kind(rawValue: kind) else {
                throw StoreError(.corrupt, "broadcast \(id) has counts of an unknown kind \(kind)")
            }
            counts.add(
                kind: k, reason: reason, devices: Int(devices), retried: Int(retried), possiblyDuplicated: Int(dup),
                pruned: Int(pruned))
        }
        return counts
    }

    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func breakerStates(app: String) throws(StoreError) -> [String: PruningBreaker.State] {
        try pool.withConnection { (db) throws(StoreError) -> [String: PruningBreaker.State] in
            var states: [String: PruningBreaker.State] = [:]
            for (endpoint, answers, bad, consecutive, tripped) in try db.rows("""
                SELECT endpoint, answers, bad_device_tokens, consecutive, tripped FROM pruning_breakers WHERE app = \(app)
                """, as: (String, Int64, Int64, Int64, Bool).self) {
                states[endpoint] = PruningBreaker.State(
                    answers: Int(answers), badDeviceTokens: Int(bad), consecutive: Int(consecutive), tripped: tripped)
            }
            return states
        }
    }

    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func saveBreakerStates(app: String, _ states: [String: PruningBreaker.State]) throws(StoreError) {
        guard !states.isEmpty else { return }
        try pool.transaction { (db) throws(StoreError) in
            for (endpoint, state) in states.sorted(by: { $0.key < $1.key }) {
                let (answers, bad, consecutive) = (Int64(state.answers), Int64(state.badDeviceTokens), Int64(state.consecutive))
                try db.query("""
                    INSERT INTO pruning_breakers (app, endpoint, answers, bad_device_tokens, consecutive, tripped, updated_ms)
                    VALUES (\(app), \(endpoint), \(answers), \(bad), \(consecutive), \(state.tripped), coalesce(\(now)::bigint, pp_now_ms()))
                    ON CONFLICT (app, endpoint) DO UPDATE SET answers = excluded.answers,
                        bad_device_tokens = excluded.bad_device_tokens, consecutive = excluded.consecutive,
                        tripped = excluded.tripped, updated_ms = excluded.updated_ms
                    """)
            }
        }
    }
}
