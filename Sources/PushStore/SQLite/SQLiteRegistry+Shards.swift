import PushCore

/// The SQLite side of shards (see ``DeliveryStore``): one writer at a time, so a claim is a plain write
/// transaction; fences and expiry work exactly as on PostgreSQL.
extension SQLiteRegistry {
    /// Makes a broadcast workable (see ``DeliveryStore/startBroadcast(id:shardSize:newRound:)``).
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func startBroadcast(id: String, shardSize: Int, newRound: Bool) throws(StoreError) -> BroadcastRecord {
        let now = nowMs()
        return try write { (db) throws(StoreError) -> BroadcastRecord in
            guard let record = try Self.broadcast(id: id, in: db) else {
                throw StoreError(.invalidInput, "broadcast \(id) does not exist")
            }
            let shardCount = try Self.scalar("SELECT count(*) FROM broadcast_shards WHERE broadcast_id = ?1", id, in: db)
            switch BroadcastStart.step(for: record, hasShards: shardCount > 0, newRound: newRound) {
            case .unchanged:
                return record
            case .split:
                let total: Int
                if record.explicitTokens {
                    total = Int(try Self.scalar("SELECT count(*) FROM broadcast_tokens WHERE broadcast_id = ?1", id, in: db))
                } else if record.needsAudienceQuery {
                    total = try Self.countTargeted(record, in: db)
                } else {
                    total = try Self.count(app: record.app, channel: record.channel, environment: record.environment, in: db)
                }
                let insert = try db.statement(
                    "INSERT INTO broadcast_shards (broadcast_id, shard, lo, hi, state) VALUES (?1, ?2, ?3, ?4, 'pending')")
                for (index, bounds) in BroadcastShard.ranges(cuts: try Self.shardCuts(of: record, total: total, size: shardSize, in: db)).enumerated() {
                    try insert.bind(1, id)
                    try insert.bind(2, Int64(index))
                    try insert.bind(3, bounds.lo)
                    try insert.bind(4, bounds.hi)
                    try insert.run()
                }
                let update = try db.statement("""
                    UPDATE broadcasts SET state = 'running', run = 1, total = ?2, error = NULL, updated_ms = ?3,
                        finished_ms = NULL
                    WHERE id = ?1
                    """)
                try update.bind(1, id)
                try update.bind(2, Int64(total))
                try update.bind(3, now)
                try update.run()
            case .newRound:
                try Self.run("UPDATE broadcast_shards SET state = 'pending', available_ms = 0 WHERE broadcast_id = ?1", id, in: db)
                let update = try db.statement("""
                    UPDATE broadcasts SET state = 'running', run = run + 1, error = NULL, updated_ms = ?2, finished_ms = NULL
                    WHERE id = ?1
                    """)
                try update.bind(1, id)
                try update.bind(2, now)
                try update.run()
            case .resume:
                try Self.run("UPDATE broadcast_shards SET available_ms = 0 WHERE broadcast_id = ?1 AND state = 'pending'", id, in: db)
                let update = try db.statement("UPDATE broadcasts SET state = 'running', updated_ms = ?2 WHERE id = ?1 AND state IN (\(StateSQL.resumable))")
                try update.bind(1, id)
                try update.bind(2, now)
                try update.run()
            }
            guard let started = try Self.broadcast(id: id, in: db) else { throw StoreError(.corrupt, "broadcast \(id) vanished") }
            return started
        }
    }

    /// Every `size`-th targeted token in key order (the last token of each shard but the last); at most 65,535 cuts.
    /// An app's (or an environment's) devices are cut along their key (``plainShardCuts``); the other audiences are
    /// numbered in one scan.
    static func shardCuts(of record: BroadcastRecord, total: Int, size: Int, in db: Connection) throws(StoreError) -> [String] {
        guard let size = BroadcastStart.cutEvery(total: Int64(total), shardSize: size) else { return [] }
        if !record.needsAudienceQuery, !record.explicitTokens, record.channel == nil {
            return try plainShardCuts(app: record.app, environment: record.environment, total: Int64(total), every: size, in: db)
        }
        let targeted: String
        var audienceValues: [SQLValue] = []
        if record.needsAudienceQuery {
            (targeted, audienceValues) = targetedTokens(of: record, firstIndex: 7)
        } else if record.explicitTokens {
            targeted = "SELECT token FROM broadcast_tokens WHERE broadcast_id = ?1"
        } else {
            // A channel's devices (every other case returned above).
            targeted = """
                SELECT c.token AS token FROM device_channels c JOIN devices d ON d.id = c.device_id
                WHERE c.app = ?2 AND c.channel = ?3 AND (?4 IS NULL OR d.environment = ?4)
                """
        }
        let select = try db.statement("""
            SELECT token FROM (SELECT token, row_number() OVER (ORDER BY token) AS rn FROM (\(targeted)))
            WHERE rn % ?5 = 0 AND rn < ?6 ORDER BY token
            """)
        defer { select.reset() }
        try select.bind(1, record.id)
        try select.bind(2, record.app)
        try select.bind(3, record.channel)
        try select.bind(4, record.environment?.rawValue)
        try select.bind(5, size)
        try select.bind(6, Int64(total))
        try bind(audienceValues, to: select, from: 7)
        var cuts: [String] = []
        while try select.step() { cuts.append(select.text(0)) }
        return cuts
    }

    /// ``shardCuts(of:total:size:in:)`` for every device of an app (or of one environment): each cut is found from the
    /// previous one along the `(app, token)` key, skipping `every` rows (tokens are unique per app). The numbering
    /// query the other audiences use cost ~6,500 instructions per device on a 60,000-device broadcast (callgrind;
    /// 34 ms against 1–4 ms for this, sqlite3 on the same registry).
    private static func plainShardCuts(
        app: String, environment: APNsEnvironment?, total: Int64, every size: Int64, in db: Connection
    ) throws(StoreError) -> [String] {
        let select = try db.statement("""
            SELECT token FROM devices WHERE app = ?1 AND (?2 IS NULL OR environment = ?2) AND token > ?3
            ORDER BY token LIMIT 1 OFFSET ?4
            """)
        defer { select.reset() }
        var cuts: [String] = []
        var last = ""
        var rank = size
        while rank < total {
            try select.bind(1, app)
            try select.bind(2, environment?.rawValue)
            try select.bind(3, last)
            try select.bind(4, size - 1)
            guard try select.step() else { break }
            last = select.text(0)
            select.reset()
            cuts.append(last)
            rank += size
        }
        return cuts
    }

    /// Claims one shard (see ``DeliveryStore/claimShard(broadcastId:apps:owner:ttlMs:ownerIsDead:)``).
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func claimShard(
        broadcastId: String?, apps: [String]?, owner: String, ttlMs: Int64, ownerIsDead: @Sendable (String) -> Bool
    ) throws(StoreError) -> BroadcastShard? {
        let now = nowMs()
        return try write { (db) throws(StoreError) -> BroadcastShard? in
            var claim = ShardClaim(owner: owner, now: now, dead: [])
            let holders = try db.statement("""
                SELECT DISTINCT owner FROM broadcast_shards
                WHERE \(StateSQL.liveClaim(now: "?3")) AND owner <> ?1 AND substr(owner, 1, length(?2)) = ?2
                """)
            try holders.bind(1, owner)
            try holders.bind(2, claim.hostPrefix)
            try holders.bind(3, now)
            var live: [String] = []
            while try holders.step() { live.append(holders.text(0)) }
            holders.reset()
            claim = ShardClaim(owner: owner, now: now, dead: ShardClaim.deadHolders(among: live, owner: owner, isDead: ownerIsDead))
            let select = try db.statement("""
                SELECT s.broadcast_id, s.shard, s.state, s.owner, s.expires_ms, s.available_ms, b.app
                FROM broadcast_shards s JOIN broadcasts b ON b.id = s.broadcast_id
                WHERE s.state <> 'done' AND b.state IN (\(StateSQL.workable)) AND (?1 IS NULL OR s.broadcast_id = ?1)
                ORDER BY b.created_ms, s.broadcast_id, s.shard
                """)
            try select.bind(1, broadcastId)
            var chosen: (id: String, index: Int64)?
            while try select.step() {
                if let apps, !apps.contains(select.text(6)) { continue }
                if claim.allows(state: select.text(2), availableMs: select.int64(5), expiresMs: select.int64(4), holder: select.text(3)) {
                    chosen = (select.text(0), select.int64(1))
                    break
                }
            }
            select.reset()
            guard let chosen else { return nil }
            try Self.endClaim(id: chosen.id, index: chosen.index, ending: "taken over", now: now, in: db)
            let update = try db.statement("""
                UPDATE broadcast_shards SET state = 'claimed', owner = ?3, fence = fence + 1, run = run + 1, expires_ms = ?4
                WHERE broadcast_id = ?1 AND shard = ?2
                """)
            try update.bind(1, chosen.id)
            try update.bind(2, chosen.index)
            try update.bind(3, owner)
            try update.bind(4, now + ttlMs)
            try update.run()
            guard let shard = try Self.shards(id: chosen.id, index: chosen.index, in: db).first else {
                throw StoreError(.corrupt, "shard \(chosen.index) of \(chosen.id) vanished")
            }
            let log = try db.statement(
                "INSERT INTO broadcast_claims (broadcast_id, shard, fence, owner, claimed_ms) VALUES (?1, ?2, ?3, ?4, ?5)")
            try log.bind(1, chosen.id)
            try log.bind(2, chosen.index)
            try log.bind(3, shard.fence)
            try log.bind(4, owner)
            try log.bind(5, now)
            try log.run()
            // A claim moves the broadcast to running (``BroadcastRecord/after(_:now:)``, from the states it names).
            let running = try db.statement(
                "UPDATE broadcasts SET state = 'running', updated_ms = ?2 WHERE id = ?1 AND state IN (\(StateSQL.resumable))")
            try running.bind(1, chosen.id)
            try running.bind(2, now)
            try running.run()
            return shard
        }
    }

    /// Extends a claim; false when the fence no longer holds the shard.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func renewShard(id: String, index: Int, fence: Int64, ttlMs: Int64) throws(StoreError) -> Bool {
        let now = nowMs()
        return try write { (db) throws(StoreError) -> Bool in
            let update = try db.statement("""
                UPDATE broadcast_shards SET expires_ms = ?4
                WHERE broadcast_id = ?1 AND shard = ?2 AND fence = ?3 AND state = 'claimed'
                    AND NOT EXISTS (SELECT 1 FROM broadcasts WHERE id = ?1 AND state = 'cancelled')
                """)
            try update.bind(1, id)
            try update.bind(2, Int64(index))
            try update.bind(3, fence)
            try update.bind(4, now + ttlMs)
            try update.run()
            return db.changes == 1
        }
    }

    /// Ends a claim (see ``DeliveryStore/finishShard(id:index:fence:end:)``).
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func finishShard(id: String, index: Int, fence: Int64, end: ShardEnd) throws(StoreError) -> BroadcastState {
        let now = nowMs()
        return try write { (db) throws(StoreError) -> BroadcastState in
            let update: Statement
            let ending: String
            switch end {
            case .finished:
                ending = "finished"
                update = try db.statement("""
                    UPDATE broadcast_shards SET state = ?7, owner = '', expires_ms = 0, main_done = 1
                    WHERE broadcast_id = ?1 AND shard = ?2 AND fence = ?3 AND state = 'claimed'
                    """)
            case .released(_, let retryAfterMs, let mainDone, let settled):
                ending = "released"
                update = try db.statement("""
                    UPDATE broadcast_shards SET state = ?7, owner = '', expires_ms = 0, available_ms = ?4,
                        main_done = max(main_done, ?5),
                        dispatched = CASE WHEN ?6 IS NULL THEN dispatched ELSE max(checkpoint, ?6) END
                    WHERE broadcast_id = ?1 AND shard = ?2 AND fence = ?3 AND state = 'claimed'
                    """)
                try update.bind(4, now + max(0, retryAfterMs))
                try update.bind(5, Int64(mainDone ? 1 : 0))
                try update.bind(6, settled)
            }
            try update.bind(1, id)
            try update.bind(2, Int64(index))
            try update.bind(3, fence)
            try update.bind(7, BroadcastShard.State.after(end).rawValue)
            try update.run()
            guard db.changes == 1 else { throw ShardFence.lost(id: id, index: index, fence: fence) }
            let log = try db.statement(
                "UPDATE broadcast_claims SET ended_ms = ?4, ending = ?5 WHERE broadcast_id = ?1 AND shard = ?2 AND fence = ?3")
            try log.bind(1, id)
            try log.bind(2, Int64(index))
            try log.bind(3, fence)
            try log.bind(4, now)
            try log.bind(5, ending)
            try log.run()

            // The broadcast's side: load, decide (``BroadcastRecord/after(_:now:)``), store.
            guard let record = try Self.broadcast(id: id, in: db) else { throw StoreError(.corrupt, "broadcast \(id) vanished") }
            let event = BroadcastEvent.shardEnded(
                end, shardsLeft: try Self.shardsLeft(id: id, in: db), liveLease: try Self.hasLiveLease(id: id, now: now, in: db))
            let change = record.after(event, now: now)
            try Self.store(change, id: id, in: db)
            return change?.state ?? record.state
        }
    }

    /// The broadcast's shards in key order.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func shards(id: String) throws(StoreError) -> [BroadcastShard] {
        try read { (db) throws(StoreError) -> [BroadcastShard] in try Self.shards(id: id, index: nil, in: db) }
    }

    /// Notifications each worker committed for the broadcast.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func workers(id: String) throws(StoreError) -> [String: Int] {
        try read { (db) throws(StoreError) -> [String: Int] in
            let select = try db.statement(
                "SELECT owner, sum(sent) FROM broadcast_claims WHERE broadcast_id = ?1 GROUP BY owner HAVING sum(sent) > 0")
            defer { select.reset() }
            try select.bind(1, id)
            var out: [String: Int] = [:]
            while try select.step() { out[select.text(0)] = Int(select.int64(1)) }
            return out
        }
    }

    /// Inside a write transaction: the shard's checkpoint moves to `checkpoint` (if any) and `sent` is added
    /// to its claim, only while `fence` holds it; `.leaseLost` otherwise.
    static func requireShard(id: String, index: Int, fence: Int64, checkpoint: String?, sent: Int, in db: Connection) throws(StoreError) {
        let update = try db.statement("""
            UPDATE broadcast_shards SET checkpoint = CASE WHEN ?4 IS NULL THEN checkpoint ELSE max(checkpoint, ?4) END
            WHERE broadcast_id = ?1 AND shard = ?2 AND fence = ?3 AND state = 'claimed'
            """)
        try update.bind(1, id)
        try update.bind(2, Int64(index))
        try update.bind(3, fence)
        try update.bind(4, checkpoint)
        try update.run()
        guard db.changes == 1 else { throw ShardFence.lost(id: id, index: index, fence: fence) }
        guard sent > 0 else { return }
        let count = try db.statement(
            "UPDATE broadcast_claims SET sent = sent + ?4 WHERE broadcast_id = ?1 AND shard = ?2 AND fence = ?3")
        try count.bind(1, id)
        try count.bind(2, Int64(index))
        try count.bind(3, fence)
        try count.bind(4, Int64(sent))
        try count.run()
    }


    private static func endClaim(id: String, index: Int64, ending: String, now: Int64, in db: Connection) throws(StoreError) {
        let update = try db.statement("""
            UPDATE broadcast_claims SET ended_ms = ?3, ending = ?4
            WHERE broadcast_id = ?1 AND shard = ?2 AND ended_ms IS NULL
            """)
        try update.bind(1, id)
        try update.bind(2, index)
        try update.bind(3, now)
        try update.bind(4, ending)
        try update.run()
    }

    private static func shards(id: String, index: Int64?, in db: Connection) throws(StoreError) -> [BroadcastShard] {
        let select = try db.statement("""
            SELECT broadcast_id, shard, lo, hi, state, owner, fence, run, checkpoint, dispatched, main_done, retry_run,
                retry_dispatched, expires_ms
            FROM broadcast_shards WHERE broadcast_id = ?1 AND (?2 IS NULL OR shard = ?2) ORDER BY shard
            """)
        defer { select.reset() }
        try select.bind(1, id)
        try select.bind(2, index)
        var out: [BroadcastShard] = []
        while try select.step() {
            guard let state = BroadcastShard.State(rawValue: select.text(4)) else {
                throw StoreError(.corrupt, "shard \(select.int64(1)) of \(id) has an unknown state \(select.text(4))")
            }
            out.append(BroadcastShard(
                broadcastId: select.text(0), index: Int(select.int64(1)), lo: select.text(2), hi: select.text(3), state: state,
                owner: select.text(5), fence: select.int64(6), run: Int(select.int64(7)), checkpoint: select.text(8),
                dispatched: select.text(9), mainDone: select.int64(10) != 0, retryRun: Int(select.int64(11)),
                retryDispatched: select.text(12), expiresMs: select.int64(13)))
        }
        return out
    }

    static func scalar(_ sql: String, _ id: String, in db: Connection) throws(StoreError) -> Int64 {
        let select = try db.statement(sql)
        defer { select.reset() }
        try select.bind(1, id)
        return try select.step() ? select.int64(0) : 0
    }

    private static func run(_ sql: String, _ id: String, in db: Connection) throws(StoreError) {
        let statement = try db.statement(sql)
        try statement.bind(1, id)
        try statement.run()
    }
}
