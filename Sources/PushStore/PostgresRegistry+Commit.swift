import PostgresNIO
import PushCore

/// The PostgreSQL commit of a batch of outcomes (see ``DeliveryBackend/commit(_:)``).
extension PostgresRegistry {
    /// Writes a batch in ONE statement: the shard's fence check and checkpoint, the claim's count, the
    /// delivery-log rows and counters, the last-success times and the broadcast outcomes, from one set of arrays sent once.
    /// Every write depends on the fenced shard update, so a stale claim writes nothing, and the shard row is
    /// locked only for the statement (the feed's dispatch marks do not queue behind a long transaction).
    /// Prunes (rare: a dead token) need the gated prune's per-token logic; a batch holding any runs in a
    /// transaction: its prunes, the statement, then the prunes the breaker released (and, for an app with a
    /// webhook, the outbox events of its prunes and final failures).
    func commit(_ batch: OutcomeBatch) throws(StoreError) -> CommitReceipt {
        let prunes = batch.outcomes.filter { o in
            o.kind == .tokenDead && o.prune.map { Registry.prunes($0.reason) } == true
        }
        guard prunes.isEmpty && batch.releasedPrunes.isEmpty && !batch.hasFailureEvents else {
            return try pool.transaction { (db) throws(StoreError) -> CommitReceipt in
                var receipt = CommitReceipt()
                for o in prunes {
                    guard let prune = o.prune else { continue }
                    let outcome = try self.prune(
                        app: batch.app, token: o.token, reason: prune.reason, apnsTimestampMs: prune.apnsTimestampMs, in: db)
                    if outcome == .deleted { receipt.pruned.insert(o.token) }
                }
                receipt.cancelled = try write(batch, pruned: receipt.pruned, in: db)
                for token in batch.releasedPrunes {
                    let outcome = try self.prune(app: batch.app, token: token, reason: .badDeviceToken, apnsTimestampMs: nil, in: db)
                    guard outcome == .deleted else { continue }
                    receipt.pruned.insert(token)
                    if let job = batch.job {
                        let (id, hex) = (job.id, token.hex)
                        try db.query("UPDATE broadcast_outcomes SET pruned = true WHERE broadcast_id = \(id) AND token = \(hex)")
                    }
                }
                try insertWebhookEvents(batch.webhookEvents(pruned: receipt.pruned), in: db)
                return receipt
            }
        }
        let cancelled = try pool.withConnection { (db) throws(StoreError) -> Bool in try write(batch, pruned: [], in: db) }
        return CommitReceipt(cancelled: cancelled)
    }

    /// The one statement of a commit. Outcomes the batch's ``OutcomeBatch/deliveryLog`` leaves out (always the
    /// pending markers) get an outcome row but no delivery-log row; when a token appears twice in a batch its last
    /// outcome is the one kept, as with SQLite's INSERT OR REPLACE. Returns whether the batch's broadcast has been
    /// cancelled (``CommitReceipt/cancelled``).
    private func write(_ batch: OutcomeBatch, pruned: Set<DeviceToken>, in db: PostgresSession) throws(StoreError) -> Bool {
        let outcomes = batch.outcomes
        guard !outcomes.isEmpty || batch.job != nil else { return false }
        var lastIndex: [DeviceToken: Int] = [:]
        for (i, o) in outcomes.enumerated() { lastIndex[o.token] = i }
        let n = outcomes.count
        var tokens: [String] = [], kinds: [String] = [], statuses: [Int64] = [], reasons: [String] = []
        var attempts: [Int64] = [], dups: [Bool] = [], apnsIds: [String] = [], uniques: [String] = []
        var firsts: [Int64] = [], finished: [Int64] = [], keep: [Bool] = [], prunedFlags: [Bool] = []
        tokens.reserveCapacity(n); kinds.reserveCapacity(n); statuses.reserveCapacity(n); reasons.reserveCapacity(n)
        attempts.reserveCapacity(n); dups.reserveCapacity(n); apnsIds.reserveCapacity(n); uniques.reserveCapacity(n)
        firsts.reserveCapacity(n); finished.reserveCapacity(n); keep.reserveCapacity(n); prunedFlags.reserveCapacity(n)
        var sent: Int64 = 0
        var lastAcceptedMs: Int64 = 0
        for (i, o) in outcomes.enumerated() {
            tokens.append(o.token.hex)
            kinds.append(o.kind.rawValue)
            statuses.append(Int64(o.status))
            reasons.append(o.reason ?? "")
            attempts.append(Int64(o.attempts))
            dups.append(o.possiblyDuplicated)
            apnsIds.append(o.apnsId)
            uniques.append(o.uniqueId ?? "")
            firsts.append(o.startedMs)
            finished.append(o.finishedMs)
            keep.append(lastIndex[o.token] == i)
            prunedFlags.append(pruned.contains(o.token))
            if o.kind != .pending { sent += 1 }
            if o.kind == .accepted { lastAcceptedMs = max(lastAcceptedMs, o.finishedMs) }
        }
        let tally = DeliveryCount.tally(outcomes.compactMap { $0.logRecord(app: batch.app, broadcastId: batch.job?.id) })
        let (countStatuses, countReasons) = (tally.map { Int64($0.key.status) }, tally.map(\.key.reason))
        let (counts, retries) = (tally.map { Int64($0.value.count) }, tally.map { Int64($0.value.retries) })
        let logged = DeliveryOutcome.Kind.allCases.filter(batch.deliveryLog.logs).map(\.rawValue)
        let bucket = counterBucket
        let app = batch.app
        let job = batch.job
        let (id, shard, fence, run) = (job?.id, Int64(job?.shard ?? 0), job?.fence ?? 0, Int64(job?.run ?? 0))
        let checkpoint = job?.checkpoint
        let ok = try db.rows("""
            WITH fenced AS (
                UPDATE broadcast_shards SET checkpoint = CASE WHEN \(checkpoint)::text IS NULL THEN checkpoint
                    ELSE greatest(checkpoint, \(checkpoint)) END
                WHERE broadcast_id = \(id)::text AND shard = \(shard) AND fence = \(fence) AND state = 'claimed'
                RETURNING 1
            ), holds AS (
                SELECT 1 FROM fenced UNION ALL SELECT 1 WHERE \(id)::text IS NULL
            ), x AS (
                SELECT * FROM unnest(\(tokens)::text[], \(kinds)::text[], \(statuses)::bigint[], \(reasons)::text[],
                    \(attempts)::bigint[], \(dups)::boolean[], \(apnsIds)::text[], \(uniques)::text[], \(firsts)::bigint[],
                    \(finished)::bigint[], \(keep)::boolean[], \(prunedFlags)::boolean[])
                    AS x (t, k, s, r, a, d, i, u, f, e, keep, p)
                WHERE EXISTS (SELECT 1 FROM holds)
            ), claim AS (
                UPDATE broadcast_claims SET sent = sent + \(sent)
                WHERE \(sent) > 0 AND broadcast_id = \(id)::text AND shard = \(shard) AND fence = \(fence)
                    AND EXISTS (SELECT 1 FROM fenced)
            ), log AS (
                INSERT INTO delivery_log (app, apns_id, unique_id, token, status, reason, attempts, possibly_duplicated,
                    first_attempt_ms, finished_ms, kind, broadcast_id)
                SELECT \(app), i, nullif(u, ''), t, s, nullif(r, ''), a, d, f, e, k, \(id)::text FROM x
                WHERE k = ANY(\(logged)::text[])
            ), counted AS (
                INSERT INTO delivery_counters (app, status, reason, bucket, count, retries)
                SELECT \(app), s, r, \(bucket), c, n
                FROM unnest(\(countStatuses)::bigint[], \(countReasons)::text[], \(counts)::bigint[], \(retries)::bigint[])
                    AS y (s, r, c, n)
                WHERE EXISTS (SELECT 1 FROM holds)
                ON CONFLICT (app, status, reason, bucket) DO UPDATE SET count = delivery_counters.count + excluded.count,
                    retries = delivery_counters.retries + excluded.retries
            ), seen AS (
                UPDATE devices SET last_success_ms = greatest(coalesce(last_success_ms, 0), \(lastAcceptedMs))
                WHERE app = \(app) AND token = ANY(ARRAY(SELECT t FROM x WHERE k = 'accepted'))
            ), outcome AS (
                INSERT INTO broadcast_outcomes (broadcast_id, token, kind, status, reason, attempts, pruned,
                    possibly_duplicated, run)
                SELECT \(id)::text, t, k, s, nullif(r, ''), a, p, d, \(run) FROM x WHERE keep AND \(id)::text IS NOT NULL
                ORDER BY t
                ON CONFLICT (broadcast_id, token) DO UPDATE SET kind = excluded.kind, status = excluded.status,
                    reason = excluded.reason, attempts = excluded.attempts, pruned = excluded.pruned,
                    possibly_duplicated = excluded.possibly_duplicated, run = excluded.run
            )
            SELECT (SELECT count(*) FROM holds),
                (SELECT count(*) FROM broadcasts WHERE id = \(id)::text AND state = 'cancelled')
            """, as: (Int64, Int64).self)
        guard let (held, cancelled) = ok.first, held == 1 else {
            throw Registry.lostShard(id: job?.id ?? "", index: job?.shard ?? 0, fence: job?.fence ?? 0)
        }
        return cancelled > 0
    }
}
