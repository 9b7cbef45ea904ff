import PushCore

/// The SQLite side of a claim's work (see ``DeliveryStore``): every write checks the shard's fence in
/// its own transaction.
extension SQLiteRegistry {
    /// One keyset page of an explicit-token broadcast in (`after`, `through`], with each token's registered
    /// environment if any.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func explicitTargets(id: String, after: String, through: String, limit: Int) throws(StoreError) -> [DeliveryTarget] {
        try read { (db) throws(StoreError) -> [DeliveryTarget] in
            let select = try db.statement("""
                SELECT t.token, d.environment, d.locale, d.service, d.subscription FROM broadcast_tokens t
                JOIN broadcasts b ON b.id = t.broadcast_id
                LEFT JOIN devices d ON d.app = b.app AND d.token = t.token
                WHERE t.broadcast_id = ?1 AND t.token > ?2 AND t.token <= ?4 ORDER BY t.token LIMIT ?3
                """)
            defer { select.reset() }
            try select.bind(1, id)
            try select.bind(2, after)
            try select.bind(3, Int64(limit))
            try select.bind(4, through)
            var out: [DeliveryTarget] = []
            while try select.step() {
                out.append(DeliveryTarget(
                    storedToken: select.text(0), environment: select.optionalText(1), locale: select.optionalText(2),
                    service: select.optionalText(3), subscription: select.optionalText(4)))
            }
            return out
        }
    }

    /// Outcomes stored for tokens in (`after`, `through`], by token hex.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func storedOutcomes(id: String, after: String, through: String) throws(StoreError) -> [String: StoredOutcome] {
        try read { (db) throws(StoreError) -> [String: StoredOutcome] in
            let select = try db.statement("""
                SELECT token, kind, possibly_duplicated, run FROM broadcast_outcomes
                WHERE broadcast_id = ?1 AND token > ?2 AND token <= ?3
                """)
            defer { select.reset() }
            try select.bind(1, id)
            try select.bind(2, after)
            try select.bind(3, through)
            var out: [String: StoredOutcome] = [:]
            while try select.step() {
                guard let kind = DeliveryOutcome.Kind(rawValue: select.text(1)) else {
                    throw StoreError(.corrupt, "broadcast \(id) holds an outcome of unknown kind \(select.text(1))")
                }
                out[select.text(0)] = StoredOutcome(
                    kind: kind, possiblyDuplicated: select.int64(2) != 0, run: Int(select.int64(3)))
            }
            return out
        }
    }

    /// One keyset page of registered devices in (`after`, `through`] (token and environment only).
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func targetPage(app: String, channel: String?, environment: APNsEnvironment?, after: String, through: String, limit: Int)
        throws(StoreError) -> [DeliveryTarget]
    {
        if let channel { try Channels.validate(channel) }
        return try read { (db) throws(StoreError) -> [DeliveryTarget] in
            let sql = channel == nil
                ? """
                SELECT d.token, d.environment, d.service, d.subscription FROM devices d
                WHERE d.app = ?1 AND d.token > ?2 AND d.token <= ?6 AND (?3 IS NULL OR d.environment = ?3)
                ORDER BY d.token LIMIT ?4
                """
                : """
                SELECT c.token, d.environment, d.service, d.subscription FROM device_channels c JOIN devices d ON d.id = c.device_id
                WHERE c.app = ?1 AND c.channel = ?5 AND c.token > ?2 AND c.token <= ?6 AND (?3 IS NULL OR d.environment = ?3)
                ORDER BY c.token LIMIT ?4
                """
            let select = try db.statement(sql)
            defer { select.reset() }
            try select.bind(1, app)
            try select.bind(2, after)
            try select.bind(3, environment?.rawValue)
            try select.bind(4, Int64(limit))
            if let channel { try select.bind(5, channel) }
            try select.bind(6, through)
            var out: [DeliveryTarget] = []
            out.reserveCapacity(limit)
            while try select.step() {
                out.append(DeliveryTarget(
                    storedToken: select.text(0), environment: select.optionalText(1), service: select.optionalText(2),
                    subscription: select.optionalText(3)))
            }
            return out
        }
    }

    /// One keyset page of tokens in (`after`, `through`] deferred, or left pending, by a run before `run`.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func deferredTargets(id: String, beforeRun run: Int, after: String, through: String, limit: Int)
        throws(StoreError) -> [(target: DeliveryTarget, previous: StoredOutcome)]
    {
        try read { (db) throws(StoreError) -> [(target: DeliveryTarget, previous: StoredOutcome)] in
            let select = try db.statement("""
                SELECT o.token, d.environment, o.possibly_duplicated, o.run, o.kind, d.locale, d.service, d.subscription
                FROM broadcast_outcomes o
                JOIN broadcasts b ON b.id = o.broadcast_id
                LEFT JOIN devices d ON d.app = b.app AND d.token = o.token
                WHERE o.broadcast_id = ?1 AND o.kind IN ('deferred', 'pending') AND o.run < ?2 AND o.token > ?3 AND o.token <= ?5
                ORDER BY o.token LIMIT ?4
                """)
            defer { select.reset() }
            try select.bind(1, id)
            try select.bind(2, Int64(run))
            try select.bind(3, after)
            try select.bind(4, Int64(limit))
            try select.bind(5, through)
            var out: [(target: DeliveryTarget, previous: StoredOutcome)] = []
            while try select.step() {
                out.append((
                    DeliveryTarget(
                        storedToken: select.text(0), environment: select.optionalText(1), locale: select.optionalText(5),
                        service: select.optionalText(6), subscription: select.optionalText(7)),
                    StoredOutcome(
                        kind: DeliveryOutcome.Kind(rawValue: select.text(4)) ?? .deferred, possiblyDuplicated: select.int64(2) != 0,
                        run: Int(select.int64(3)))))
            }
            return out
        }
    }

    /// Raises the pass's dispatch mark of shard `index` to `through`, under `fence`.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func markDispatched(id: String, index: Int, fence: Int64, pass: DeliveryPass, run: Int, through: String) throws(StoreError) {
        try write { (db) throws(StoreError) in
            let sql: String
            switch pass {
            case .main:
                sql = "UPDATE broadcast_shards SET dispatched = max(dispatched, ?4)"
            case .retry:
                sql = """
                    UPDATE broadcast_shards SET retry_dispatched = CASE WHEN retry_run = ?5 THEN max(retry_dispatched, ?4) ELSE ?4 END,
                        retry_run = ?5
                    """
            }
            let update = try db.statement(sql + " WHERE broadcast_id = ?1 AND shard = ?2 AND fence = ?3 AND state = 'claimed'")
            try update.bind(1, id)
            try update.bind(2, Int64(index))
            try update.bind(3, fence)
            try update.bind(4, through)
            if pass == .retry { try update.bind(5, Int64(run)) }
            try update.run()
            guard db.changes == 1 else { throw ShardFence.lost(id: id, index: index, fence: fence) }
        }
    }

    /// Writes a batch of outcomes in ONE transaction (see ``OutcomeBatch``): prunes (as the store decides them),
    /// the rows of devices that need action later (replacing or removing the rows they had), the broadcast's
    /// counters, the delivery-log rows and counters, the last-success times of logged accepted notifications,
    /// released BadDeviceToken prunes and the shard's checkpoint. A job's batch is written only while its fence
    /// holds the shard.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func commit(_ batch: OutcomeBatch) throws(StoreError) -> CommitReceipt {
        let now = nowMs()
        return try write { (db) throws(StoreError) -> CommitReceipt in
            var receipt = CommitReceipt()
            for i in batch.outcomes.indices {
                guard batch.outcomes[i].kind == .tokenDead, let prune = batch.outcomes[i].prune, PruneGate.prunes(prune) else { continue }
                let token = batch.outcomes[i].token
                let outcome = try Self.prune(app: batch.app, token: token, prune, now: now, in: db)
                if outcome == .deleted { receipt.pruned.insert(token) }
            }
            for token in batch.releasedPrunes {
                let outcome = try Self.prune(app: batch.app, token: token, PruneRequest(reason: .badDeviceToken), now: now, in: db)
                if outcome == .deleted { receipt.pruned.insert(token) }
            }
            if let job = batch.job {
                let before = try Self.outcomeRows(id: job.id, tokens: batch.tokensToLookUp, in: db)
                let counts = BroadcastCountDeltas(batch, before: before, pruned: receipt.pruned)
                try Self.requireShard(
                    id: job.id, index: job.shard, fence: job.fence, checkpoint: job.checkpoint, sent: counts.settled, in: db)
                try Self.writeRows(batch, job: job, pruned: receipt.pruned, in: db)
                try Self.addCounts(counts, id: job.id, shard: job.shard, in: db)
            }
            var deliveries: [DeliveryRecord] = []
            var accepted: [DeviceToken] = []
            var lastAcceptedMs: Int64 = 0
            for i in batch.outcomes.indices where batch.logs(batch.outcomes[i].kind) {
                let o = batch.outcomes[i]
                if let record = o.logRecord(app: batch.app, broadcastId: batch.job?.id) { deliveries.append(record) }
                if o.kind == .accepted {
                    accepted.append(o.token)
                    lastAcceptedMs = max(lastAcceptedMs, o.finishedMs)
                }
            }
            if !deliveries.isEmpty { try Self.insertDeliveries(deliveries, in: db) }
            try Self.countDeliveries(DeliveryCount.tally(app: batch.app, batch.outcomes), in: db)
            if !accepted.isEmpty { try Self.markSuccess(app: batch.app, tokens: accepted, atMs: lastAcceptedMs, in: db) }
            try Self.insertWebhookEvents(batch.webhookEvents(pruned: receipt.pruned), now: now, in: db)
            if let job = batch.job {
                let state = try db.statement("SELECT 1 FROM broadcasts WHERE id = ?1 AND state = 'cancelled'")
                try state.bind(1, job.id)
                receipt.cancelled = try state.step()
                state.reset()
            }
            return receipt
        }
    }

    /// The rows broadcast `id` holds for `tokens` (hex), by token.
    static func outcomeRows(id: String, tokens: [String], in db: Connection) throws(StoreError) -> [String: OutcomeRow] {
        guard !tokens.isEmpty else { return [:] }
        let select = try db.statement("""
            SELECT kind, status, reason, attempts, possibly_duplicated, pruned FROM broadcast_outcomes
            WHERE broadcast_id = ?1 AND token = ?2
            """)
        var rows: [String: OutcomeRow] = [:]
        for token in tokens {
            try select.bind(1, id)
            try select.bind(2, token)
            if try select.step() {
                guard let kind = DeliveryOutcome.Kind(rawValue: select.text(0)) else {
                    throw StoreError(.corrupt, "broadcast \(id) holds an outcome of unknown kind \(select.text(0))")
                }
                rows[token] = OutcomeRow(
                    kind: kind, status: Int(select.int64(1)), reason: select.optionalText(2), attempts: Int(select.int64(3)),
                    possiblyDuplicated: select.int64(4) != 0, pruned: select.int64(5) != 0)
            }
            select.reset()
        }
        return rows
    }

    /// The batch's rows: written (replacing) for every outcome but accepted, removed for accepted ones that may
    /// have had one; a released prune marks its row.
    private static func writeRows(_ batch: OutcomeBatch, job: OutcomeBatch.Job, pruned: Set<DeviceToken>, in db: Connection) throws(StoreError) {
        let rows = batch.rowOutcomes
        if !rows.isEmpty {
            let insert = try db.statement("""
                INSERT OR REPLACE INTO broadcast_outcomes
                    (broadcast_id, token, kind, status, reason, attempts, pruned, possibly_duplicated, run)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
                """)
            for o in rows {
                try insert.bind(1, job.id)
                try insert.bind(2, o.token.hex)
                try insert.bind(3, o.kind.rawValue)
                try insert.bind(4, Int64(o.status))
                try insert.bind(5, o.reason)
                try insert.bind(6, Int64(o.attempts))
                try insert.bind(7, Int64(o.kind == .tokenDead && pruned.contains(o.token) ? 1 : 0))
                try insert.bind(8, Int64(o.possiblyDuplicated ? 1 : 0))
                try insert.bind(9, Int64(job.run))
                try insert.run()
            }
        }
        let removed = batch.rowsRemoved
        if !removed.isEmpty {
            let delete = try db.statement("DELETE FROM broadcast_outcomes WHERE broadcast_id = ?1 AND token = ?2")
            for token in removed {
                try delete.bind(1, job.id)
                try delete.bind(2, token.hex)
                try delete.run()
            }
        }
        let marked = batch.releasedPrunes.filter(pruned.contains)
        if !marked.isEmpty {
            let mark = try db.statement("UPDATE broadcast_outcomes SET pruned = 1 WHERE broadcast_id = ?1 AND token = ?2")
            for token in marked {
                try mark.bind(1, job.id)
                try mark.bind(2, token.hex)
                try mark.run()
            }
        }
    }

    /// Adds a commit's count changes to the broadcast's counters of shard `shard`.
    private static func addCounts(_ counts: BroadcastCountDeltas, id: String, shard: Int, in db: Connection) throws(StoreError) {
        let rows = counts.rows
        guard !rows.isEmpty else { return }
        let upsert = try db.statement("""
            INSERT INTO broadcast_counts (broadcast_id, shard, kind, reason, devices, retried, possibly_duplicated, pruned)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
            ON CONFLICT (broadcast_id, shard, kind, reason) DO UPDATE SET devices = devices + excluded.devices,
                retried = retried + excluded.retried, possibly_duplicated = possibly_duplicated + excluded.possibly_duplicated,
                pruned = pruned + excluded.pruned
            """)
        for (key, delta) in rows {
            try upsert.bind(1, id)
            try upsert.bind(2, Int64(shard))
            try upsert.bind(3, key.kind.rawValue)
            try upsert.bind(4, key.reason)
            try upsert.bind(5, Int64(delta.devices))
            try upsert.bind(6, Int64(delta.retried))
            try upsert.bind(7, Int64(delta.possiblyDuplicated))
            try upsert.bind(8, Int64(delta.pruned))
            try upsert.run()
        }
    }

    /// Records why a broadcast stopped (see ``DeliveryStore/noteStopped(id:error:)``); it stays resumable.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func noteStopped(id: String, error: String) throws(StoreError) {
        let now = nowMs()
        try write { (db) throws(StoreError) in
            guard let record = try Self.broadcast(id: id, in: db) else { return }
            let live = try Self.hasLiveLease(id: id, now: now, in: db)
            try Self.store(record.after(.stopped(error: error, liveLease: live), now: now), id: id, in: db)
        }
    }
}
