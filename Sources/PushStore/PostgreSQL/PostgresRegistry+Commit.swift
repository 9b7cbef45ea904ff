import PostgresNIO
import PushCore

/// The PostgreSQL commit of a batch of outcomes (see ``DeliveryStore/commit(_:)``).
extension PostgresRegistry {
    /// Writes a batch: the shard's fence check and checkpoint, the claim's count, the broadcast's counters, the
    /// rows of devices that need action later, the delivery-log rows and counters and the last-success times —
    /// in ONE statement from arrays sent once. Every write depends on the fenced shard update, so a stale claim
    /// writes nothing, and the shard row is locked only for the statement (the feed's dispatch marks do not queue
    /// behind a long transaction). A batch of accepted devices that cannot have rows (the common case) is that
    /// statement alone. One that replaces rows first reads them (the counters uncount what a row replaces; the
    /// fence keeps every other writer off the shard's rows), and prunes (rare: a dead token) need the gated
    /// prune's per-token logic: such a batch runs in a transaction — prunes, the read, the statement, and for an
    /// app with a webhook the outbox events of its prunes and final failures.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func commit(_ batch: OutcomeBatch) throws(StoreError) -> CommitReceipt {
        let prunes = batch.outcomes.filter { o in
            o.kind == .tokenDead && o.prune.map(PruneGate.prunes) == true
        }
        let lookUp = batch.tokensToLookUp
        guard prunes.isEmpty && batch.releasedPrunes.isEmpty && !batch.hasFailureEvents && lookUp.isEmpty else {
            return try pool.transaction { (db) throws(StoreError) -> CommitReceipt in
                var receipt = CommitReceipt()
                for o in prunes {
                    guard let prune = o.prune else { continue }
                    let outcome = try self.prune(app: batch.app, token: o.token, prune, in: db)
                    if outcome == .deleted { receipt.pruned.insert(o.token) }
                }
                for token in batch.releasedPrunes {
                    let outcome = try self.prune(app: batch.app, token: token, PruneRequest(reason: .badDeviceToken), in: db)
                    if outcome == .deleted { receipt.pruned.insert(token) }
                }
                let before = try outcomeRows(id: batch.job?.id, tokens: lookUp, in: db)
                receipt.cancelled = try write(batch, before: before, pruned: receipt.pruned, in: db)
                try insertWebhookEvents(batch.webhookEvents(pruned: receipt.pruned), in: db)
                return receipt
            }
        }
        let cancelled = try pool.withConnection { (db) throws(StoreError) -> Bool in try write(batch, before: [:], pruned: [], in: db) }
        return CommitReceipt(cancelled: cancelled)
    }

    /// The rows broadcast `id` holds for `tokens` (hex), by token.
    private func outcomeRows(id: String?, tokens: [String], in db: PostgresSession) throws(StoreError) -> [String: OutcomeRow] {
        guard let id, !tokens.isEmpty else { return [:] }
        var rows: [String: OutcomeRow] = [:]
        for (token, kind, status, reason, attempts, dup, pruned) in try db.rows("""
            SELECT token, kind, status::bigint, reason, attempts::bigint, possibly_duplicated, pruned FROM broadcast_outcomes
            WHERE broadcast_id = \(id) AND token = ANY(\(tokens)::text[])
            """, as: (String, String, Int64, String?, Int64, Bool, Bool).self) {
            guard let k = DeliveryOutcome.Kind(rawValue: kind) else {
                throw StoreError(.corrupt, "broadcast \(id) holds an outcome of unknown kind \(kind)")
            }
            rows[token] = OutcomeRow(
                kind: k, status: Int(status), reason: reason, attempts: Int(attempts), possiblyDuplicated: dup, pruned: pruned)
        }
        return rows
    }

    /// The one statement of a commit (see ``commit(_:)``), given the rows the broadcast held for the batch's
    /// tokens and what this commit pruned. Returns whether the batch's broadcast has been cancelled
    /// (``CommitReceipt/cancelled``).
    private func write(_ batch: OutcomeBatch, before: [String: OutcomeRow], pruned: Set<DeviceToken>, in db: PostgresSession)
        throws(StoreError) -> Bool
    {
        guard !batch.outcomes.isEmpty || batch.job != nil else { return false }
        let app = batch.app
        let job = batch.job
        let (id, shard, fence, run) = (job?.id, Int64(job?.shard ?? 0), job?.fence ?? 0, Int64(job?.run ?? 0))
        let checkpoint = job?.checkpoint

        // The delivery log: the outcomes the app's scope logs; last success: the logged accepted ones.
        let logged = batch.outcomes.filter { batch.logs($0.kind) }
        let (lTokens, lKinds, lStatuses, lReasons) = (logged.map(\.token.hex), logged.map(\.kind.rawValue),
            logged.map { Int64($0.status) }, logged.map { $0.reason ?? "" })
        let (lAttempts, lDups, lIds, lUniques) = (logged.map { Int64($0.attempts) }, logged.map(\.possiblyDuplicated),
            logged.map(\.notificationId), logged.map { $0.uniqueId ?? "" })
        let (lFirsts, lFinished, lServices) = (logged.map(\.startedMs), logged.map(\.finishedMs), logged.map(\.service.rawValue))
        let succeeded = logged.filter { $0.kind == .accepted }
        let successTokens = succeeded.map(\.token.hex)
        let lastSuccessMs = succeeded.map(\.finishedMs).max() ?? 0
        let tally = DeliveryCount.tally(app: app, batch.outcomes)
        let (cServices, cStatuses, cReasons) = (tally.map(\.key.service.rawValue), tally.map { Int64($0.key.status) }, tally.map(\.key.reason))
        let (cCounts, cRetries) = (tally.map { Int64($0.value.count) }, tally.map { Int64($0.value.retries) })

        // The broadcast's rows and counters.
        let rows = batch.rowOutcomes
        let (rTokens, rKinds, rStatuses, rReasons) = (rows.map(\.token.hex), rows.map(\.kind.rawValue),
            rows.map { Int64($0.status) }, rows.map { $0.reason ?? "" })
        let (rAttempts, rDups) = (rows.map { Int64($0.attempts) }, rows.map(\.possiblyDuplicated))
        let rPruned = rows.map { $0.kind == .tokenDead && pruned.contains($0.token) }
        let removed = batch.rowsRemoved.map(\.hex)
        let rowTokens = Set(rTokens)
        let marked = batch.job == nil ? [] : batch.releasedPrunes.filter { pruned.contains($0) && !rowTokens.contains($0.hex) }.map(\.hex)
        let counts = BroadcastCountDeltas(batch, before: before, pruned: pruned)
        let deltas = counts.rows
        let (kKinds, kReasons) = (deltas.map(\.key.kind.rawValue), deltas.map(\.key.reason))
        let (kDevices, kRetried) = (deltas.map { Int64($0.delta.devices) }, deltas.map { Int64($0.delta.retried) })
        let (kDups, kPruned) = (deltas.map { Int64($0.delta.possiblyDuplicated) }, deltas.map { Int64($0.delta.pruned) })
        let sent = Int64(counts.settled)
        let bucket = counterBucket

        // The common batch — accepted devices of a broadcast, nothing to log or keep per device — gets a statement
        // of its own: the server parses and plans every statement it is sent, and this one has four parts, not ten.
        if let id, logged.isEmpty, rows.isEmpty, removed.isEmpty, marked.isEmpty {
            let ok = try db.rows("""
                WITH fenced AS (
                    UPDATE broadcast_shards SET checkpoint = CASE WHEN \(checkpoint)::text IS NULL THEN checkpoint
                        ELSE greatest(checkpoint, \(checkpoint)) END
                    WHERE broadcast_id = \(id) AND shard = \(shard) AND fence = \(fence) AND state = 'claimed'
                    RETURNING 1
                ), claim AS (
                    UPDATE broadcast_claims SET sent = sent + \(sent)
                    WHERE \(sent) > 0 AND broadcast_id = \(id) AND shard = \(shard) AND fence = \(fence)
                        AND EXISTS (SELECT 1 FROM fenced)
                ), counted AS (
                    INSERT INTO delivery_counters (app, service, status, reason, bucket, count, retries)
                    SELECT \(app), v, s, r, \(bucket), c, n
                    FROM unnest(\(cServices)::text[], \(cStatuses)::bigint[], \(cReasons)::text[], \(cCounts)::bigint[],
                        \(cRetries)::bigint[]) AS y (v, s, r, c, n)
                    WHERE EXISTS (SELECT 1 FROM fenced)
                    ON CONFLICT (app, service, status, reason, bucket) DO UPDATE SET count = delivery_counters.count + excluded.count,
                        retries = delivery_counters.retries + excluded.retries
                ), tallied AS (
                    INSERT INTO broadcast_counts (broadcast_id, shard, kind, reason, devices, retried, possibly_duplicated, pruned)
                    SELECT \(id), \(shard), k, r, n, t, d, p
                    FROM unnest(\(kKinds)::text[], \(kReasons)::text[], \(kDevices)::bigint[], \(kRetried)::bigint[],
                        \(kDups)::bigint[], \(kPruned)::bigint[]) AS x (k, r, n, t, d, p)
                    WHERE EXISTS (SELECT 1 FROM fenced)
                    ON CONFLICT (broadcast_id, shard, kind, reason) DO UPDATE SET
                        devices = broadcast_counts.devices + excluded.devices, retried = broadcast_counts.retried + excluded.retried,
                        possibly_duplicated = broadcast_counts.possibly_duplicated + excluded.possibly_duplicated,
                        pruned = broadcast_counts.pruned + excluded.pruned
                )
                SELECT (SELECT count(*) FROM fenced), (SELECT count(*) FROM broadcasts WHERE id = \(id) AND state = 'cancelled')
                """, as: (Int64, Int64).self)
            guard let (held, cancelled) = ok.first, held == 1 else {
                throw ShardFence.lost(id: id, index: Int(shard), fence: fence)
            }
            return cancelled > 0
        }

        let ok = try db.rows("""
            WITH fenced AS (
                UPDATE broadcast_shards SET checkpoint = CASE WHEN \(checkpoint)::text IS NULL THEN checkpoint
                    ELSE greatest(checkpoint, \(checkpoint)) END
                WHERE broadcast_id = \(id)::text AND shard = \(shard) AND fence = \(fence) AND state = 'claimed'
                RETURNING 1
            ), holds AS (
                SELECT 1 FROM fenced UNION ALL SELECT 1 WHERE \(id)::text IS NULL
            ), claim AS (
                UPDATE broadcast_claims SET sent = sent + \(sent)
                WHERE \(sent) > 0 AND broadcast_id = \(id)::text AND shard = \(shard) AND fence = \(fence)
                    AND EXISTS (SELECT 1 FROM fenced)
            ), log AS (
                INSERT INTO delivery_log (app, apns_id, unique_id, token, status, reason, attempts, possibly_duplicated,
                    first_attempt_ms, finished_ms, kind, broadcast_id, service)
                SELECT \(app), i, nullif(u, ''), t, s, nullif(r, ''), a, d, f, e, k, \(id)::text, v
                FROM unnest(\(lTokens)::text[], \(lKinds)::text[], \(lStatuses)::bigint[], \(lReasons)::text[],
                    \(lAttempts)::bigint[], \(lDups)::boolean[], \(lIds)::text[], \(lUniques)::text[], \(lFirsts)::bigint[],
                    \(lFinished)::bigint[], \(lServices)::text[]) AS x (t, k, s, r, a, d, i, u, f, e, v)
                WHERE EXISTS (SELECT 1 FROM holds)
            ), counted AS (
                INSERT INTO delivery_counters (app, service, status, reason, bucket, count, retries)
                SELECT \(app), v, s, r, \(bucket), c, n
                FROM unnest(\(cServices)::text[], \(cStatuses)::bigint[], \(cReasons)::text[], \(cCounts)::bigint[],
                    \(cRetries)::bigint[]) AS y (v, s, r, c, n)
                WHERE EXISTS (SELECT 1 FROM holds)
                ON CONFLICT (app, service, status, reason, bucket) DO UPDATE SET count = delivery_counters.count + excluded.count,
                    retries = delivery_counters.retries + excluded.retries
            ), seen AS (
                UPDATE devices SET last_success_ms = greatest(coalesce(last_success_ms, 0), \(lastSuccessMs))
                WHERE app = \(app) AND token = ANY(\(successTokens)::text[]) AND EXISTS (SELECT 1 FROM holds)
            ), outcome AS (
                INSERT INTO broadcast_outcomes (broadcast_id, token, kind, status, reason, attempts, pruned,
                    possibly_duplicated, run)
                SELECT \(id)::text, t, k, s, nullif(r, ''), a, p, d, \(run)
                FROM unnest(\(rTokens)::text[], \(rKinds)::text[], \(rStatuses)::bigint[], \(rReasons)::text[],
                    \(rAttempts)::bigint[], \(rPruned)::boolean[], \(rDups)::boolean[]) AS x (t, k, s, r, a, p, d)
                WHERE EXISTS (SELECT 1 FROM fenced)
                ORDER BY t
                ON CONFLICT (broadcast_id, token) DO UPDATE SET kind = excluded.kind, status = excluded.status,
                    reason = excluded.reason, attempts = excluded.attempts, pruned = excluded.pruned,
                    possibly_duplicated = excluded.possibly_duplicated, run = excluded.run
            ), gone AS (
                DELETE FROM broadcast_outcomes
                WHERE broadcast_id = \(id)::text AND token = ANY(\(removed)::text[]) AND EXISTS (SELECT 1 FROM fenced)
            ), marked AS (
                UPDATE broadcast_outcomes SET pruned = true
                WHERE broadcast_id = \(id)::text AND token = ANY(\(marked)::text[]) AND EXISTS (SELECT 1 FROM fenced)
            ), tallied AS (
                INSERT INTO broadcast_counts (broadcast_id, shard, kind, reason, devices, retried, possibly_duplicated, pruned)
                SELECT \(id)::text, \(shard), k, r, n, t, d, p
                FROM unnest(\(kKinds)::text[], \(kReasons)::text[], \(kDevices)::bigint[], \(kRetried)::bigint[],
                    \(kDups)::bigint[], \(kPruned)::bigint[]) AS x (k, r, n, t, d, p)
                WHERE EXISTS (SELECT 1 FROM fenced)
                ON CONFLICT (broadcast_id, shard, kind, reason) DO UPDATE SET
                    devices = broadcast_counts.devices + excluded.devices, retried = broadcast_counts.retried + excluded.retried,
                    possibly_duplicated = broadcast_counts.possibly_duplicated + excluded.possibly_duplicated,
                    pruned = broadcast_counts.pruned + excluded.pruned
            )
            SELECT (SELECT count(*) FROM holds),
                (SELECT count(*) FROM broadcasts WHERE id = \(id)::text AND state = 'cancelled')
            """, as: (Int64, Int64).self)
        guard let (held, cancelled) = ok.first, held == 1 else {
            throw ShardFence.lost(id: job?.id ?? "", index: job?.shard ?? 0, fence: job?.fence ?? 0)
        }
        return cancelled > 0
    }
}
