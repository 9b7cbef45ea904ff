import PostgresNIO
import PushCore

/// The PostgreSQL side of a claim's work (see ``BackendDeliveryStore``): every fenced write names its shard's
/// fence (see ``requireShard(id:index:fence:checkpoint:sent:in:)``).
extension PostgresRegistry {
    func explicitTargets(id: String, after: String, through: String, limit: Int) throws(StoreError) -> [DeliveryTarget] {
        let limit = Int64(limit)
        return try pool.withConnection { (db) throws(StoreError) -> [DeliveryTarget] in
            try db.rows("""
                SELECT t.token, d.environment FROM broadcast_tokens t
                JOIN broadcasts b ON b.id = t.broadcast_id
                LEFT JOIN devices d ON d.app = b.app AND d.token = t.token
                WHERE t.broadcast_id = \(id) AND t.token > \(after) AND t.token <= \(through) ORDER BY t.token LIMIT \(limit)
                """, as: (String, String?).self
            ).map { DeliveryTarget(token: DeviceToken(trustedCanonicalHex: $0.0), environment: $0.1.flatMap(APNsEnvironment.init(rawValue:))) }
        }
    }

    func storedOutcomes(id: String, after: String, through: String) throws(StoreError) -> [String: StoredOutcome] {
        try pool.withConnection { (db) throws(StoreError) -> [String: StoredOutcome] in
            var out: [String: StoredOutcome] = [:]
            for (token, kind, dup, run) in try db.rows("""
                SELECT token, kind, possibly_duplicated, run::bigint FROM broadcast_outcomes
                WHERE broadcast_id = \(id) AND token > \(after) AND token <= \(through)
                """, as: (String, String, Bool, Int64).self) {
                guard let k = DeliveryOutcome.Kind(rawValue: kind) else {
                    throw StoreError(.corrupt, "broadcast \(id) holds an outcome of unknown kind \(kind)")
                }
                out[token] = StoredOutcome(kind: k, possiblyDuplicated: dup, run: Int(run))
            }
            return out
        }
    }

    func targetPage(app: String, channel: String?, environment: APNsEnvironment?, after: String, through: String, limit: Int)
        throws(StoreError) -> [DeliveryTarget]
    {
        if let channel { try Channels.validate(channel) }
        let (env, limit) = (environment?.rawValue, Int64(limit))
        return try pool.withConnection { (db) throws(StoreError) -> [DeliveryTarget] in
            let query: PostgresQuery
            if let channel {
                query = """
                    SELECT c.token, d.environment FROM device_channels c JOIN devices d ON d.id = c.device_id
                    WHERE c.app = \(app) AND c.channel = \(channel) AND c.token > \(after) AND c.token <= \(through)
                        AND (\(env)::text IS NULL OR d.environment = \(env))
                    ORDER BY c.token LIMIT \(limit)
                    """
            } else {
                query = """
                    SELECT token, environment FROM devices
                    WHERE app = \(app) AND token > \(after) AND token <= \(through) AND (\(env)::text IS NULL OR environment = \(env))
                    ORDER BY token LIMIT \(limit)
                    """
            }
            return try db.rows(query, as: (String, String).self).map {
                DeliveryTarget(token: DeviceToken(trustedCanonicalHex: $0.0), environment: APNsEnvironment(rawValue: $0.1))
            }
        }
    }

    func deferredTargets(id: String, beforeRun run: Int, after: String, through: String, limit: Int)
        throws(StoreError) -> [(target: DeliveryTarget, previous: StoredOutcome)]
    {
        let (run, limit) = (Int64(run), Int64(limit))
        return try pool.withConnection { (db) throws(StoreError) -> [(target: DeliveryTarget, previous: StoredOutcome)] in
            try db.rows("""
                SELECT o.token, d.environment, o.possibly_duplicated, o.run::bigint FROM broadcast_outcomes o
                JOIN broadcasts b ON b.id = o.broadcast_id
                LEFT JOIN devices d ON d.app = b.app AND d.token = o.token
                WHERE o.broadcast_id = \(id) AND o.kind = 'deferred' AND o.run < \(run) AND o.token > \(after)
                    AND o.token <= \(through)
                ORDER BY o.token LIMIT \(limit)
                """, as: (String, String?, Bool, Int64).self
            ).map {
                (DeliveryTarget(token: DeviceToken(trustedCanonicalHex: $0.0), environment: $0.1.flatMap(APNsEnvironment.init(rawValue:))),
                 StoredOutcome(kind: .deferred, possiblyDuplicated: $0.2, run: Int($0.3)))
            }
        }
    }

    func markDispatched(id: String, index: Int, fence: Int64, pass: DeliveryPass, run: Int, through: String) throws(StoreError) {
        let (shard, run) = (Int64(index), Int64(run))
        let changed = try pool.withConnection { (db) throws(StoreError) -> Int in
            switch pass {
            case .main:
                return try db.changes("""
                    UPDATE broadcast_shards SET dispatched = greatest(dispatched, \(through))
                    WHERE broadcast_id = \(id) AND shard = \(shard) AND fence = \(fence) AND state = 'claimed'
                    """)
            case .retry:
                return try db.changes("""
                    UPDATE broadcast_shards SET retry_dispatched = CASE WHEN retry_run = \(run)
                        THEN greatest(retry_dispatched, \(through)) ELSE \(through) END, retry_run = \(run)
                    WHERE broadcast_id = \(id) AND shard = \(shard) AND fence = \(fence) AND state = 'claimed'
                    """)
            }
        }
        guard changed == 1 else { throw Registry.lostShard(id: id, index: index, fence: fence) }
    }

    /// One transaction: the shard's fence and checkpoint first, prunes (per token, as the store decides them),
    /// then delivery-log rows, outcomes and last-success times as multi-row statements.
    func commit(_ batch: OutcomeBatch) throws(StoreError) -> CommitReceipt {
        try pool.transaction { (db) throws(StoreError) -> CommitReceipt in
            if let job = batch.job {
                let sent = batch.outcomes.reduce(0) { $0 + ($1.kind == .pending ? 0 : 1) }
                try requireShard(id: job.id, index: job.shard, fence: job.fence, checkpoint: job.checkpoint, sent: sent, in: db)
            }
            var receipt = CommitReceipt()
            var deliveries: [DeliveryRecord] = []
            deliveries.reserveCapacity(batch.outcomes.count)
            var accepted: [String] = []
            var lastAcceptedMs: Int64 = 0
            var rows: [(token: String, kind: String, status: Int64, reason: String, attempts: Int64, pruned: Bool, dup: Bool)] = []
            rows.reserveCapacity(batch.outcomes.count)
            for o in batch.outcomes {
                var pruned = false
                if let prune = o.prune, o.kind == .tokenDead, Registry.prunes(prune.reason) {
                    pruned = try self.prune(
                        app: batch.app, token: o.token, reason: prune.reason, apnsTimestampMs: prune.apnsTimestampMs, in: db) == .deleted
                    if pruned { receipt.pruned.insert(o.token) }
                }
                if o.kind == .accepted {
                    accepted.append(o.token.hex)
                    lastAcceptedMs = max(lastAcceptedMs, o.finishedMs)
                }
                if let record = o.logRecord(app: batch.app) { deliveries.append(record) }
                rows.append((o.token.hex, o.kind.rawValue, Int64(o.status), o.reason ?? "", Int64(o.attempts), pruned, o.possiblyDuplicated))
            }
            try insertDeliveries(deliveries, in: db)
            if !accepted.isEmpty {
                let app = batch.app
                try db.query("""
                    UPDATE devices SET last_success_ms = greatest(coalesce(last_success_ms, 0), \(lastAcceptedMs))
                    WHERE app = \(app) AND token = ANY(\(accepted.sorted())::text[])
                    """)
            }
            if let job = batch.job, !rows.isEmpty {
                // The last outcome of a token in the batch wins, as with SQLite's INSERT OR REPLACE.
                var last: [String: Int] = [:]
                for (i, r) in rows.enumerated() { last[r.token] = i }
                let kept = last.values.sorted().map { rows[$0] }.sorted { $0.token < $1.token }
                let (id, run) = (job.id, Int64(job.run))
                try db.query("""
                    INSERT INTO broadcast_outcomes (broadcast_id, token, kind, status, reason, attempts, pruned,
                        possibly_duplicated, run)
                    SELECT \(id), t, k, s, nullif(r, ''), a, p, d, \(run)
                    FROM unnest(\(kept.map(\.token))::text[], \(kept.map(\.kind))::text[], \(kept.map(\.status))::bigint[],
                        \(kept.map(\.reason))::text[], \(kept.map(\.attempts))::bigint[], \(kept.map(\.pruned))::boolean[],
                        \(kept.map(\.dup))::boolean[]) AS x (t, k, s, r, a, p, d)
                    ON CONFLICT (broadcast_id, token) DO UPDATE SET kind = excluded.kind, status = excluded.status,
                        reason = excluded.reason, attempts = excluded.attempts, pruned = excluded.pruned,
                        possibly_duplicated = excluded.possibly_duplicated, run = excluded.run
                    """)
            }
            for token in batch.releasedPrunes {
                let outcome = try self.prune(app: batch.app, token: token, reason: .badDeviceToken, apnsTimestampMs: nil, in: db)
                guard outcome == .deleted else { continue }
                receipt.pruned.insert(token)
                if let job = batch.job {
                    let (id, hex) = (job.id, token.hex)
                    try db.query("UPDATE broadcast_outcomes SET pruned = true WHERE broadcast_id = \(id) AND token = \(hex)")
                }
            }
            return receipt
        }
    }

    func noteUnstartable(id: String, error: String) throws(StoreError) {
        try pool.withConnection { (db) throws(StoreError) in
            _ = try db.query("""
                UPDATE broadcasts SET error = \(error), updated_ms = coalesce(\(now)::bigint, pp_now_ms()),
                    state = CASE WHEN state = 'completed' THEN state ELSE 'interrupted' END
                WHERE id = \(id)
                """)
        }
    }
}
