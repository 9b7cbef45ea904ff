import PushCore

/// The SQLite side of a broadcast run (see ``BackendDeliveryStore``): every write checks the lease fence in
/// its own transaction.
extension Registry {
    /// Starts a run under `fence`: state running, the run number incremented, `total` counted when never counted.
    func beginRun(id: String, fence: Int64) throws(StoreError) -> BroadcastRecord {
        let now = nowMs()
        return try write { (db) throws(StoreError) -> BroadcastRecord in
            guard let record = try Self.broadcast(id: id, in: db) else {
                throw StoreError(.invalidInput, "broadcast \(id) does not exist")
            }
            try Self.requireLease(app: record.app, fence: fence, in: db)
            var total = record.total
            if record.state == .pending || total == 0 {
                if record.explicitTokens {
                    let select = try db.statement("SELECT count(*) FROM broadcast_tokens WHERE broadcast_id = ?1")
                    defer { select.reset() }
                    try select.bind(1, id)
                    total = try select.step() ? Int(select.int64(0)) : 0
                } else {
                    total = try Self.count(app: record.app, channel: record.channel, environment: record.environment, in: db)
                }
            }
            let update = try db.statement("""
                UPDATE broadcasts SET state = 'running', run = run + 1, total = ?2, error = NULL, updated_ms = ?3,
                    finished_ms = NULL
                WHERE id = ?1
                """)
            try update.bind(1, id)
            try update.bind(2, Int64(total))
            try update.bind(3, now)
            try update.run()
            guard let started = try Self.broadcast(id: id, in: db) else {
                throw StoreError(.corrupt, "broadcast \(id) vanished")
            }
            return started
        }
    }

    /// One keyset page of an explicit-token broadcast, with each token's registered environment if any.
    func explicitTargets(id: String, after: String, limit: Int) throws(StoreError) -> [DeliveryTarget] {
        try read { (db) throws(StoreError) -> [DeliveryTarget] in
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
            var out: [DeliveryTarget] = []
            while try select.step() {
                out.append(DeliveryTarget(
                    token: DeviceToken(trustedCanonicalHex: select.text(0)),
                    environment: select.optionalText(1).flatMap(APNsEnvironment.init(rawValue:))))
            }
            return out
        }
    }

    /// Outcomes stored for tokens in (`after`, `through`], by token hex.
    func storedOutcomes(id: String, after: String, through: String) throws(StoreError) -> [String: StoredOutcome] {
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

    /// One keyset page of tokens deferred by a run before `run`.
    func deferredTargets(id: String, beforeRun run: Int, after: String, limit: Int)
        throws(StoreError) -> [(target: DeliveryTarget, previous: StoredOutcome)]
    {
        try read { (db) throws(StoreError) -> [(target: DeliveryTarget, previous: StoredOutcome)] in
            let select = try db.statement("""
                SELECT o.token, d.environment, o.possibly_duplicated, o.run FROM broadcast_outcomes o
                JOIN broadcasts b ON b.id = o.broadcast_id
                LEFT JOIN devices d ON d.app = b.app AND d.token = o.token
                WHERE o.broadcast_id = ?1 AND o.kind = 'deferred' AND o.run < ?2 AND o.token > ?3
                ORDER BY o.token LIMIT ?4
                """)
            defer { select.reset() }
            try select.bind(1, id)
            try select.bind(2, Int64(run))
            try select.bind(3, after)
            try select.bind(4, Int64(limit))
            var out: [(target: DeliveryTarget, previous: StoredOutcome)] = []
            while try select.step() {
                out.append((
                    DeliveryTarget(
                        token: DeviceToken(trustedCanonicalHex: select.text(0)),
                        environment: select.optionalText(1).flatMap(APNsEnvironment.init(rawValue:))),
                    StoredOutcome(kind: .deferred, possiblyDuplicated: select.int64(2) != 0, run: Int(select.int64(3)))))
            }
            return out
        }
    }

    /// Raises the pass's dispatch mark to `through`, under `fence`.
    func markDispatched(id: String, fence: Int64, pass: DeliveryPass, run: Int, through: String) throws(StoreError) {
        try write { (db) throws(StoreError) in
            let sql: String
            switch pass {
            case .main:
                sql = "UPDATE broadcasts SET dispatched = max(dispatched, ?2) WHERE id = ?1"
            case .retry:
                sql = """
                    UPDATE broadcasts SET retry_dispatched = CASE WHEN retry_run = ?3 THEN max(retry_dispatched, ?2) ELSE ?2 END,
                        retry_run = ?3
                    WHERE id = ?1
                    """
            }
            try Self.requireLease(forBroadcast: id, fence: fence, in: db)
            let update = try db.statement(sql)
            try update.bind(1, id)
            try update.bind(2, through)
            if pass == .retry { try update.bind(3, Int64(run)) }
            try update.run()
        }
    }

    /// Writes a batch of outcomes in ONE transaction: prunes (as the store decides them), delivery-log rows,
    /// broadcast outcomes with the store's pruned flags, last-success times, released BadDeviceToken prunes
    /// and the checkpoint. A job's batch is written only while its fence holds the lease.
    func commit(_ batch: OutcomeBatch) throws(StoreError) -> CommitReceipt {
        let now = nowMs()
        return try write { (db) throws(StoreError) -> CommitReceipt in
            if let job = batch.job { try Self.requireLease(forBroadcast: job.id, fence: job.fence, in: db) }
            var receipt = CommitReceipt()
            var deliveries: [DeliveryRecord] = []
            deliveries.reserveCapacity(batch.outcomes.count)
            var accepted: [DeviceToken] = []
            var lastAcceptedMs: Int64 = 0
            let insert = batch.job == nil ? nil : try db.statement("""
                INSERT OR REPLACE INTO broadcast_outcomes
                    (broadcast_id, token, kind, status, reason, attempts, pruned, possibly_duplicated, run)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
                """)
            for o in batch.outcomes {
                var pruned = false
                if let prune = o.prune, o.kind == .tokenDead, Self.prunes(prune.reason) {
                    pruned = try Self.prune(
                        app: batch.app, token: o.token, reason: prune.reason, apnsTimestampMs: prune.apnsTimestampMs,
                        now: now, in: db) == .deleted
                    if pruned { receipt.pruned.insert(o.token) }
                }
                if o.kind == .accepted {
                    accepted.append(o.token)
                    lastAcceptedMs = max(lastAcceptedMs, o.finishedMs)
                }
                if let record = o.logRecord(app: batch.app) { deliveries.append(record) }
                if let insert, let job = batch.job {
                    try insert.bind(1, job.id)
                    try insert.bind(2, o.token.hex)
                    try insert.bind(3, o.kind.rawValue)
                    try insert.bind(4, Int64(o.status))
                    try insert.bind(5, o.reason)
                    try insert.bind(6, Int64(o.attempts))
                    try insert.bind(7, Int64(pruned ? 1 : 0))
                    try insert.bind(8, Int64(o.possiblyDuplicated ? 1 : 0))
                    try insert.bind(9, Int64(job.run))
                    try insert.run()
                }
            }
            if !deliveries.isEmpty { try Self.insertDeliveries(deliveries, in: db) }
            if !accepted.isEmpty { try Self.markSuccess(app: batch.app, tokens: accepted, atMs: lastAcceptedMs, in: db) }
            if !batch.releasedPrunes.isEmpty {
                let mark = batch.job == nil ? nil : try db.statement(
                    "UPDATE broadcast_outcomes SET pruned = 1 WHERE broadcast_id = ?1 AND token = ?2")
                for token in batch.releasedPrunes {
                    let outcome = try Self.prune(
                        app: batch.app, token: token, reason: .badDeviceToken, apnsTimestampMs: nil, now: now, in: db)
                    guard outcome == .deleted else { continue }
                    receipt.pruned.insert(token)
                    if let mark, let job = batch.job {
                        try mark.bind(1, job.id)
                        try mark.bind(2, token.hex)
                        try mark.run()
                    }
                }
            }
            if let job = batch.job, let checkpoint = job.checkpoint {
                let update = try db.statement(
                    "UPDATE broadcasts SET checkpoint = max(checkpoint, ?2), updated_ms = ?3 WHERE id = ?1")
                try update.bind(1, job.id)
                try update.bind(2, checkpoint)
                try update.bind(3, now)
                try update.run()
            }
            return receipt
        }
    }

    /// Ends a run under `fence` (see ``DeliveryStore/finishRun(id:fence:state:error:settledDispatched:)``).
    func finishRun(id: String, fence: Int64, state: BroadcastState, error: String?, settledDispatched: String?) throws(StoreError) {
        let now = nowMs()
        try write { (db) throws(StoreError) in
            try Self.requireLease(forBroadcast: id, fence: fence, in: db)
            let update = try db.statement("""
                UPDATE broadcasts SET state = ?2, error = ?3, updated_ms = ?4,
                    finished_ms = CASE WHEN ?2 = 'completed' THEN ?4 ELSE NULL END,
                    total = CASE WHEN ?2 = 'completed'
                        THEN (SELECT count(*) FROM broadcast_outcomes o WHERE o.broadcast_id = ?1 AND o.kind <> 'pending')
                        ELSE total END,
                    dispatched = CASE WHEN ?5 IS NULL THEN dispatched ELSE max(checkpoint, ?5) END
                WHERE id = ?1
                """)
            try update.bind(1, id)
            try update.bind(2, state.rawValue)
            try update.bind(3, error)
            try update.bind(4, now)
            try update.bind(5, settledDispatched)
            try update.run()
        }
    }

    /// Records why a broadcast could not start; it stays resumable.
    func noteUnstartable(id: String, error: String) throws(StoreError) {
        let now = nowMs()
        try write { (db) throws(StoreError) in
            let update = try db.statement("""
                UPDATE broadcasts SET error = ?2, updated_ms = ?3,
                    state = CASE WHEN state = 'completed' THEN state ELSE 'interrupted' END
                WHERE id = ?1
                """)
            try update.bind(1, id)
            try update.bind(2, error)
            try update.bind(3, now)
            try update.run()
        }
    }

    /// Inside a write transaction: throws `.leaseLost` unless `fence` still holds the lease of the broadcast's app.
    static func requireLease(forBroadcast id: String, fence: Int64, in db: Connection) throws(StoreError) {
        let select = try db.statement("SELECT app FROM broadcasts WHERE id = ?1")
        try select.bind(1, id)
        guard try select.step() else {
            select.reset()
            throw StoreError(.invalidInput, "broadcast \(id) does not exist")
        }
        let app = select.text(0)
        select.reset()
        try requireLease(app: app, fence: fence, in: db)
    }
}
