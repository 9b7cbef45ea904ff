import PostgresNIO
import PushCore

/// The PostgreSQL side of a broadcast run (see ``BackendDeliveryStore``). Fences work across hosts: a write
/// under a fence first takes a share lock on the lease row (`FOR SHARE`), so a takeover (`FOR UPDATE`) waits
/// for it, and a write after a takeover finds the new fence and fails with `.leaseLost`. Lease expiry is on
/// the database's clock.
extension PostgresRegistry {
    func acquireLease(
        app: String, broadcastId: String, owner: String, ttlMs: Int64, ownerIsDead: (String) -> Bool
    ) throws(StoreError) -> LeaseResult {
        try pool.transaction { (db) throws(StoreError) -> LeaseResult in
            try db.query("""
                INSERT INTO broadcast_leases (app, broadcast_id, owner, expires_ms, fence) VALUES (\(app), '', '', 0, 0)
                ON CONFLICT (app) DO NOTHING
                """)
            guard let (heldBy, holder, expires, fence, nowMs) = try db.row("""
                SELECT broadcast_id, owner, expires_ms, fence, coalesce(\(now)::bigint, pp_now_ms())
                FROM broadcast_leases WHERE app = \(app) FOR UPDATE
                """, as: (String, String, Int64, Int64, Int64).self)
            else { throw StoreError(.unknown(0), "the \(app) lease row vanished") }
            if !holder.isEmpty && holder != owner && expires > nowMs && !ownerIsDead(holder) {
                return .held(broadcastId: heldBy)
            }
            let next = fence + 1
            try db.query("""
                UPDATE broadcast_leases SET broadcast_id = \(broadcastId), owner = \(owner), expires_ms = \(nowMs + ttlMs),
                    fence = \(next)
                WHERE app = \(app)
                """)
            return .acquired(fence: next)
        }
    }

    func renewLease(app: String, fence: Int64, ttlMs: Int64) throws(StoreError) -> Bool {
        try pool.withConnection { (db) throws(StoreError) -> Bool in
            try db.changes("""
                UPDATE broadcast_leases SET expires_ms = coalesce(\(now)::bigint, pp_now_ms()) + \(ttlMs)
                WHERE app = \(app) AND fence = \(fence) AND owner <> ''
                """) == 1
        }
    }

    func releaseLease(app: String, fence: Int64) throws(StoreError) {
        try pool.withConnection { (db) throws(StoreError) in
            _ = try db.query("UPDATE broadcast_leases SET owner = '', expires_ms = 0 WHERE app = \(app) AND fence = \(fence)")
        }
    }

    /// Inside a transaction: throws `.leaseLost` unless `fence` still holds the lease of the broadcast's app,
    /// and keeps it held (share lock) until the transaction ends.
    func requireLease(forBroadcast id: String, fence: Int64, in db: PostgresSession) throws(StoreError) {
        let held = try db.row("""
            SELECT l.fence FROM broadcasts b JOIN broadcast_leases l ON l.app = b.app
            WHERE b.id = \(id) AND l.fence = \(fence) AND l.owner <> '' FOR SHARE OF l
            """, as: (Int64).self)
        if held == nil {
            guard try db.row("SELECT app FROM broadcasts WHERE id = \(id)", as: (String).self) != nil else {
                throw StoreError(.invalidInput, "broadcast \(id) does not exist")
            }
            throw StoreError(.leaseLost, "the broadcast lease of \(id) (fence \(fence)) was taken over by another process")
        }
    }

    func beginRun(id: String, fence: Int64) throws(StoreError) -> BroadcastRecord {
        try pool.transaction { (db) throws(StoreError) -> BroadcastRecord in
            guard let record = try broadcast(id: id, in: db, lock: true) else {
                throw StoreError(.invalidInput, "broadcast \(id) does not exist")
            }
            try requireLease(forBroadcast: id, fence: fence, in: db)
            var total = Int64(record.total)
            if record.state == .pending || total == 0 {
                if record.explicitTokens {
                    total = try db.row("SELECT count(*)::bigint FROM broadcast_tokens WHERE broadcast_id = \(id)", as: (Int64).self) ?? 0
                } else {
                    let (app, channel, env) = (record.app, record.channel, record.environment?.rawValue)
                    total = try db.row("""
                        SELECT CASE WHEN \(channel)::text IS NULL
                            THEN (SELECT count(*) FROM devices WHERE app = \(app) AND (\(env)::text IS NULL OR environment = \(env)))
                            ELSE (SELECT count(*) FROM device_channels c JOIN devices d ON d.id = c.device_id
                                  WHERE c.app = \(app) AND c.channel = \(channel) AND (\(env)::text IS NULL OR d.environment = \(env)))
                            END::bigint
                        """, as: (Int64).self) ?? 0
                }
            }
            try db.query("""
                UPDATE broadcasts SET state = 'running', run = run + 1, total = \(total), error = NULL,
                    updated_ms = coalesce(\(now)::bigint, pp_now_ms()), finished_ms = NULL
                WHERE id = \(id)
                """)
            guard let started = try broadcast(id: id, in: db) else { throw StoreError(.corrupt, "broadcast \(id) vanished") }
            return started
        }
    }

    func explicitTargets(id: String, after: String, limit: Int) throws(StoreError) -> [DeliveryTarget] {
        let limit = Int64(limit)
        return try pool.withConnection { (db) throws(StoreError) -> [DeliveryTarget] in
            try db.rows("""
                SELECT t.token, d.environment FROM broadcast_tokens t
                JOIN broadcasts b ON b.id = t.broadcast_id
                LEFT JOIN devices d ON d.app = b.app AND d.token = t.token
                WHERE t.broadcast_id = \(id) AND t.token > \(after) ORDER BY t.token LIMIT \(limit)
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

    func deferredTargets(id: String, beforeRun run: Int, after: String, limit: Int)
        throws(StoreError) -> [(target: DeliveryTarget, previous: StoredOutcome)]
    {
        let (run, limit) = (Int64(run), Int64(limit))
        return try pool.withConnection { (db) throws(StoreError) -> [(target: DeliveryTarget, previous: StoredOutcome)] in
            try db.rows("""
                SELECT o.token, d.environment, o.possibly_duplicated, o.run::bigint FROM broadcast_outcomes o
                JOIN broadcasts b ON b.id = o.broadcast_id
                LEFT JOIN devices d ON d.app = b.app AND d.token = o.token
                WHERE o.broadcast_id = \(id) AND o.kind = 'deferred' AND o.run < \(run) AND o.token > \(after)
                ORDER BY o.token LIMIT \(limit)
                """, as: (String, String?, Bool, Int64).self
            ).map {
                (DeliveryTarget(token: DeviceToken(trustedCanonicalHex: $0.0), environment: $0.1.flatMap(APNsEnvironment.init(rawValue:))),
                 StoredOutcome(kind: .deferred, possiblyDuplicated: $0.2, run: Int($0.3)))
            }
        }
    }

    func markDispatched(id: String, fence: Int64, pass: DeliveryPass, run: Int, through: String) throws(StoreError) {
        let run = Int64(run)
        try pool.transaction { (db) throws(StoreError) in
            try requireLease(forBroadcast: id, fence: fence, in: db)
            switch pass {
            case .main:
                try db.query("UPDATE broadcasts SET dispatched = greatest(dispatched, \(through)) WHERE id = \(id)")
            case .retry:
                try db.query("""
                    UPDATE broadcasts SET retry_dispatched = CASE WHEN retry_run = \(run)
                        THEN greatest(retry_dispatched, \(through)) ELSE \(through) END, retry_run = \(run)
                    WHERE id = \(id)
                    """)
            }
        }
    }

    /// One transaction: prunes (per token, as the store decides them), then delivery-log rows, outcomes,
    /// last-success times and the checkpoint as multi-row statements, all under the run's fence.
    func commit(_ batch: OutcomeBatch) throws(StoreError) -> CommitReceipt {
        try pool.transaction { (db) throws(StoreError) -> CommitReceipt in
            if let job = batch.job { try requireLease(forBroadcast: job.id, fence: job.fence, in: db) }
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
            if let job = batch.job, let checkpoint = job.checkpoint {
                let id = job.id
                try db.query("""
                    UPDATE broadcasts SET checkpoint = greatest(checkpoint, \(checkpoint)),
                        updated_ms = coalesce(\(now)::bigint, pp_now_ms())
                    WHERE id = \(id)
                    """)
            }
            return receipt
        }
    }

    func finishRun(id: String, fence: Int64, state: BroadcastState, error: String?, settledDispatched: String?) throws(StoreError) {
        let stateText = state.rawValue
        try pool.transaction { (db) throws(StoreError) in
            try requireLease(forBroadcast: id, fence: fence, in: db)
            try db.query("""
                UPDATE broadcasts SET state = \(stateText), error = \(error), updated_ms = n.ms,
                    finished_ms = CASE WHEN \(stateText) = 'completed' THEN n.ms ELSE NULL END,
                    total = CASE WHEN \(stateText) = 'completed'
                        THEN (SELECT count(*) FROM broadcast_outcomes o WHERE o.broadcast_id = \(id) AND o.kind <> 'pending')
                        ELSE total END,
                    dispatched = CASE WHEN \(settledDispatched)::text IS NULL THEN dispatched
                        ELSE greatest(checkpoint, \(settledDispatched)) END
                FROM (SELECT coalesce(\(now)::bigint, pp_now_ms()) AS ms) n
                WHERE id = \(id)
                """)
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
