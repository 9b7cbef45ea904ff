import PostgresNIO
import PushCore

/// The PostgreSQL side of shards (see ``DeliveryStore``). A claim locks its shard row `FOR UPDATE SKIP
/// LOCKED`, so workers on many hosts claim different shards without waiting on each other; every fenced
/// write updates the shard row under its fence first, which holds the row until the write commits, so a
/// takeover cannot interleave with it and a write after a takeover finds the new fence (`.leaseLost`).
/// Expiry is on the database's clock. Starting a broadcast and giving a shard back `NOTIFY` the workers.
extension PostgresRegistry {
    /// The channel workers `LISTEN` on.
    static let shardChannel = "pushprovider_shards"

    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func startBroadcast(id: String, shardSize: Int, newRound: Bool) throws(StoreError) -> BroadcastRecord {
        try pool.transaction { (db) throws(StoreError) -> BroadcastRecord in
            guard let record = try broadcast(id: id, in: db, lock: true) else {
                throw StoreError(.invalidInput, "broadcast \(id) does not exist")
            }
            let shards = try db.row("SELECT count(*)::bigint FROM broadcast_shards WHERE broadcast_id = \(id)", as: (Int64).self) ?? Int64(0)
            switch BroadcastStart.step(for: record, hasShards: shards > 0, newRound: newRound) {
            case .unchanged:
                return record
            case .split:
                let total: Int64
                if record.explicitTokens {
                    total = try db.row("SELECT count(*)::bigint FROM broadcast_tokens WHERE broadcast_id = \(id)", as: (Int64).self) ?? Int64(0)
                } else if record.needsAudienceQuery {
                    total = Int64(try countTargeted(record, in: db))
                } else {
                    let (app, channel, env) = (record.app, record.channel, record.environment?.rawValue)
                    total = try db.row("""
                        SELECT CASE WHEN \(channel)::text IS NULL
                            THEN (SELECT count(*) FROM devices WHERE app = \(app) AND (\(env)::text IS NULL OR environment = \(env)))
                            ELSE (SELECT count(*) FROM device_channels c JOIN devices d ON d.id = c.device_id
                                  WHERE c.app = \(app) AND c.channel = \(channel) AND (\(env)::text IS NULL OR d.environment = \(env)))
                            END::bigint
                        """, as: (Int64).self) ?? Int64(0)
                }
                let bounds = BroadcastShard.ranges(cuts: try shardCuts(of: record, total: total, size: shardSize, in: db))
                let (indexes, los, his) = (bounds.indices.map { Int64($0) }, bounds.map(\.lo), bounds.map(\.hi))
                try db.query("""
                    INSERT INTO broadcast_shards (broadcast_id, shard, lo, hi, state)
                    SELECT \(id), i, l, h, 'pending' FROM unnest(\(indexes)::bigint[], \(los)::text[], \(his)::text[]) AS x (i, l, h)
                    """)
                try db.query("""
                    UPDATE broadcasts SET state = 'running', run = 1, total = \(total), error = NULL,
                        updated_ms = coalesce(\(now)::bigint, pp_now_ms()), finished_ms = NULL
                    WHERE id = \(id)
                    """)
                try notify(id, in: db)
            case .newRound:
                try db.query("UPDATE broadcast_shards SET state = 'pending', available_ms = 0 WHERE broadcast_id = \(id)")
                try db.query("""
                    UPDATE broadcasts SET state = 'running', run = run + 1, error = NULL,
                        updated_ms = coalesce(\(now)::bigint, pp_now_ms()), finished_ms = NULL
                    WHERE id = \(id)
                    """)
                try notify(id, in: db)
            case .resume:
                try db.query("UPDATE broadcast_shards SET available_ms = 0 WHERE broadcast_id = \(id) AND state = 'pending'")
                try db.query("""
                    UPDATE broadcasts SET state = 'running', updated_ms = coalesce(\(now)::bigint, pp_now_ms())
                    WHERE id = \(id) AND state IN (\(unescaped: StateSQL.resumable))
                    """)
                try notify(id, in: db)
            }
            guard let started = try broadcast(id: id, in: db) else { throw StoreError(.corrupt, "broadcast \(id) vanished") }
            return started
        }
    }

    /// Every `size`-th targeted token in key order (the last token of each shard but the last), in one scan;
    /// at most 65,535 cuts.
    func shardCuts(of record: BroadcastRecord, total: Int64, size: Int, in db: PostgresSession) throws(StoreError) -> [String] {
        guard let size = BroadcastStart.cutEvery(total: total, shardSize: size) else { return [] }
        let (id, app, channel, env) = (record.id, record.app, record.channel, record.environment?.rawValue)
        let query: PostgresQuery
        if record.needsAudienceQuery {
            query = audienceCutsQuery(of: record, total: total, size: size)
        } else if record.explicitTokens {
            query = """
                SELECT token FROM (SELECT token, row_number() OVER (ORDER BY token) AS rn FROM broadcast_tokens
                    WHERE broadcast_id = \(id)) t
                WHERE rn % \(size) = 0 AND rn < \(total) ORDER BY token
                """
        } else if let channel {
            query = """
                SELECT token FROM (SELECT c.token, row_number() OVER (ORDER BY c.token) AS rn
                    FROM device_channels c JOIN devices d ON d.id = c.device_id
                    WHERE c.app = \(app) AND c.channel = \(channel) AND (\(env)::text IS NULL OR d.environment = \(env))) t
                WHERE rn % \(size) = 0 AND rn < \(total) ORDER BY token
                """
        } else {
            query = """
                SELECT token FROM (SELECT token, row_number() OVER (ORDER BY token) AS rn FROM devices
                    WHERE app = \(app) AND (\(env)::text IS NULL OR environment = \(env))) t
                WHERE rn % \(size) = 0 AND rn < \(total) ORDER BY token
                """
        }
        return try db.rows(query, as: (String).self)
    }

    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func claimShard(
        broadcastId: String?, apps: [String]?, owner: String, ttlMs: Int64, ownerIsDead: @Sendable (String) -> Bool
    ) throws(StoreError) -> BroadcastShard? {
        try pool.transaction { (db) throws(StoreError) -> BroadcastShard? in
            let nowMs = try db.row("SELECT coalesce(\(now)::bigint, pp_now_ms())", as: (Int64).self) ?? Int64(0)
            let host = ShardClaim(owner: owner, now: nowMs, dead: []).hostPrefix
            let live = try db.rows("""
                SELECT DISTINCT owner FROM broadcast_shards
                WHERE \(unescaped: StateSQL.liveClaim(now: String(nowMs))) AND owner <> \(owner) AND starts_with(owner, \(host))
                """, as: (String).self)
            let dead = Array(ShardClaim.deadHolders(among: live, owner: owner, isDead: ownerIsDead))
            var binds = PostgresBindings()
            binds.append(nowMs)
            binds.append(dead)
            binds.append(broadcastId)
            binds.append(apps)
            guard let (id, index) = try db.row(PostgresQuery(unsafeSQL: """
                SELECT s.broadcast_id, s.shard::bigint FROM broadcast_shards s JOIN broadcasts b ON b.id = s.broadcast_id
                WHERE s.state <> 'done' AND b.state IN (\(StateSQL.workable))
                    AND ($3::text IS NULL OR s.broadcast_id = $3)
                    AND ($4::text[] IS NULL OR b.app = ANY($4::text[]))
                    AND \(ShardClaim.postgresCondition)
                ORDER BY b.created_ms, s.broadcast_id, s.shard
                LIMIT 1 FOR UPDATE OF s SKIP LOCKED
                """, binds: binds), as: (String, Int64).self)
            else { return nil }
            try db.query("""
                UPDATE broadcast_claims SET ended_ms = \(nowMs), ending = 'taken over'
                WHERE broadcast_id = \(id) AND shard = \(index) AND ended_ms IS NULL
                """)
            guard let row = try db.row("""
                UPDATE broadcast_shards SET state = 'claimed', owner = \(owner), fence = fence + 1, run = run + 1,
                    expires_ms = \(nowMs + ttlMs)
                WHERE broadcast_id = \(id) AND shard = \(index)
                RETURNING \(unescaped: Self.shardColumns)
                """, as: ShardRow.self)
            else { throw StoreError(.corrupt, "shard \(index) of \(id) vanished") }
            let shard = try Self.shard(row)
            try db.query("""
                INSERT INTO broadcast_claims (broadcast_id, shard, fence, owner, claimed_ms)
                VALUES (\(id), \(index), \(shard.fence), \(owner), \(nowMs))
                """)
            // A claim moves the broadcast to running (``BroadcastRecord/after(_:now:)``, from the states it names) with a
            // conditional update rather than a lock taken first: claims of one broadcast on many hosts never wait on
            // each other for a broadcast that already runs.
            try db.query("UPDATE broadcasts SET state = 'running', updated_ms = \(nowMs) WHERE id = \(id) AND state IN (\(unescaped: StateSQL.resumable))")
            return shard
        }
    }

    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func renewShard(id: String, index: Int, fence: Int64, ttlMs: Int64) throws(StoreError) -> Bool {
        let index = Int64(index)
        return try pool.withConnection { (db) throws(StoreError) -> Bool in
            try db.changes("""
                UPDATE broadcast_shards SET expires_ms = coalesce(\(now)::bigint, pp_now_ms()) + \(ttlMs)
                WHERE broadcast_id = \(id) AND shard = \(index) AND fence = \(fence) AND state = 'claimed'
                    AND NOT EXISTS (SELECT 1 FROM broadcasts WHERE id = \(id) AND state = 'cancelled')
                """) == 1
        }
    }

    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func finishShard(id: String, index: Int, fence: Int64, end: ShardEnd) throws(StoreError) -> BroadcastState {
        let shard = Int64(index)
        return try pool.transaction { (db) throws(StoreError) -> BroadcastState in
            let nowMs = try db.row("SELECT coalesce(\(now)::bigint, pp_now_ms())", as: (Int64).self) ?? Int64(0)
            let changed: Int
            let ending: String
            let shardState = BroadcastShard.State.after(end).rawValue
            switch end {
            case .finished:
                ending = "finished"
                changed = try db.changes("""
                    UPDATE broadcast_shards SET state = \(shardState), owner = '', expires_ms = 0, main_done = true
                    WHERE broadcast_id = \(id) AND shard = \(shard) AND fence = \(fence) AND state = 'claimed'
                    """)
            case .released(_, let retryAfterMs, let mainDone, let settled):
                ending = "released"
                changed = try db.changes("""
                    UPDATE broadcast_shards SET state = \(shardState), owner = '', expires_ms = 0,
                        available_ms = \(nowMs + max(0, retryAfterMs)), main_done = main_done OR \(mainDone),
                        dispatched = CASE WHEN \(settled)::text IS NULL THEN dispatched ELSE greatest(checkpoint, \(settled)) END
                    WHERE broadcast_id = \(id) AND shard = \(shard) AND fence = \(fence) AND state = 'claimed'
                    """)
            }
            guard changed == 1 else { throw ShardFence.lost(id: id, index: index, fence: fence) }
            try db.query("""
                UPDATE broadcast_claims SET ended_ms = \(nowMs), ending = \(ending)
                WHERE broadcast_id = \(id) AND shard = \(shard) AND fence = \(fence)
                """)
            // Finishers of one broadcast take its row lock in turn (after their shard's); the statements after it
            // take new snapshots holding every shard finished before, so the last finisher completes the broadcast.
            // Then: load, decide (``BroadcastRecord/after(_:now:)``), store — a state this version cannot read is
            // `.corrupt`, as on SQLite.
            guard let record = try broadcast(id: id, in: db, lock: true) else { throw StoreError(.corrupt, "broadcast \(id) vanished") }
            let event = BroadcastEvent.shardEnded(
                end, shardsLeft: try shardsLeft(id: id, in: db), liveLease: try hasLiveLease(id: id, now: nowMs, in: db))
            let change = record.after(event, now: nowMs)
            try store(change, id: id, in: db)
            try notify(id, in: db)
            return change?.state ?? record.state
        }
    }

    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func shards(id: String) throws(StoreError) -> [BroadcastShard] {
        try pool.withConnection { (db) throws(StoreError) -> [BroadcastShard] in
            var out: [BroadcastShard] = []
            for row in try db.rows(
                "SELECT \(unescaped: Self.shardColumns) FROM broadcast_shards WHERE broadcast_id = \(id) ORDER BY shard", as: ShardRow.self)
            {
                out.append(try Self.shard(row))
            }
            return out
        }
    }

    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func workers(id: String) throws(StoreError) -> [String: Int] {
        try pool.withConnection { (db) throws(StoreError) -> [String: Int] in
            var out: [String: Int] = [:]
            for (owner, sent) in try db.rows("""
                SELECT owner, sum(sent)::bigint FROM broadcast_claims WHERE broadcast_id = \(id)
                GROUP BY owner HAVING sum(sent) > 0
                """, as: (String, Int64).self) {
                out[owner] = Int(sent)
            }
            return out
        }
    }

    func notify(_ id: String, in db: PostgresSession) throws(StoreError) {
        try db.query("SELECT pg_notify(\(Self.shardChannel), \(id))")
    }

    static let shardColumns = """
        broadcast_id, shard::bigint, lo, hi, state, owner, fence, run::bigint, checkpoint, dispatched, main_done,
        retry_run::bigint, retry_dispatched, expires_ms
        """

    typealias ShardRow = (String, Int64, String, String, String, String, Int64, Int64, String, String, Bool, Int64, String, Int64)

    static func shard(_ r: ShardRow) throws(StoreError) -> BroadcastShard {
        guard let state = BroadcastShard.State(rawValue: r.4) else {
            throw StoreError(.corrupt, "shard \(r.1) of \(r.0) has an unknown state \(r.4)")
        }
        return BroadcastShard(
            broadcastId: r.0, index: Int(r.1), lo: r.2, hi: r.3, state: state, owner: r.5, fence: r.6, run: Int(r.7),
            checkpoint: r.8, dispatched: r.9, mainDone: r.10, retryRun: Int(r.11), retryDispatched: r.12, expiresMs: r.13)
    }
}
