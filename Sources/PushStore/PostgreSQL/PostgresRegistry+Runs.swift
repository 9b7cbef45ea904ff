import PostgresNIO
import PushCore

/// The PostgreSQL side of a claim's work (see ``DeliveryStore``): every fenced write names its shard's
/// fence (the commit: ``commit(_:)``).
extension PostgresRegistry {
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func explicitTargets(id: String, after: String, through: String, limit: Int) throws(StoreError) -> [DeliveryTarget] {
        let limit = Int64(limit)
        return try pool.withConnection { (db) throws(StoreError) -> [DeliveryTarget] in
            try db.rows("""
                SELECT t.token, d.environment, d.locale, d.service, d.subscription FROM broadcast_tokens t
                JOIN broadcasts b ON b.id = t.broadcast_id
                LEFT JOIN devices d ON d.app = b.app AND d.token = t.token
                WHERE t.broadcast_id = \(id) AND t.token > \(after) AND t.token <= \(through) ORDER BY t.token LIMIT \(limit)
                """, as: (String, String?, String?, String?, String?).self
            ).map { DeliveryTarget(storedToken: $0.0, environment: $0.1, locale: $0.2, service: $0.3, subscription: $0.4) }
        }
    }

    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func storedOutcomes(id: String, after: String, through: String) throws(StoreError) -> [String: StoredOutcome] {
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

    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func targetPage(app: String, channel: String?, environment: APNsEnvironment?, after: String, through: String, limit: Int)
        throws(StoreError) -> [DeliveryTarget]
    {
        if let channel { try Channels.validate(channel) }
        let (env, limit) = (environment?.rawValue, Int64(limit))
        return try pool.withConnection { (db) throws(StoreError) -> [DeliveryTarget] in
            let query: PostgresQuery
            if let channel {
                query = """
                    SELECT c.token, d.environment, d.service, d.subscription FROM device_channels c JOIN devices d ON d.id = c.device_id
                    WHERE c.app = \(app) AND c.channel = \(channel) AND c.token > \(after) AND c.token <= \(through)
                        AND (\(env)::text IS NULL OR d.environment = \(env))
                    ORDER BY c.token LIMIT \(limit)
                    """
            } else {
                query = """
                    SELECT token, environment, service, subscription FROM devices
                    WHERE app = \(app) AND token > \(after) AND token <= \(through) AND (\(env)::text IS NULL OR environment = \(env))
                    ORDER BY token LIMIT \(limit)
                    """
            }
            return try db.rows(query, as: (String, String, String, String?).self).map {
                DeliveryTarget(storedToken: $0.0, environment: $0.1, service: $0.2, subscription: $0.3)
            }
        }
    }

    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func deferredTargets(id: String, beforeRun run: Int, after: String, through: String, limit: Int)
        throws(StoreError) -> [(target: DeliveryTarget, previous: StoredOutcome)]
    {
        let (run, limit) = (Int64(run), Int64(limit))
        return try pool.withConnection { (db) throws(StoreError) -> [(target: DeliveryTarget, previous: StoredOutcome)] in
            try db.rows("""
                SELECT o.token, d.environment, o.possibly_duplicated, o.run::bigint, o.kind, d.locale, d.service, d.subscription
                FROM broadcast_outcomes o
                JOIN broadcasts b ON b.id = o.broadcast_id
                LEFT JOIN devices d ON d.app = b.app AND d.token = o.token
                WHERE o.broadcast_id = \(id) AND o.kind IN ('deferred', 'pending') AND o.run < \(run) AND o.token > \(after)
                    AND o.token <= \(through)
                ORDER BY o.token LIMIT \(limit)
                """, as: (String, String?, Bool, Int64, String, String?, String?, String?).self
            ).map {
                (DeliveryTarget(storedToken: $0.0, environment: $0.1, locale: $0.5, service: $0.6, subscription: $0.7),
                 StoredOutcome(kind: DeliveryOutcome.Kind(rawValue: $0.4) ?? .deferred, possiblyDuplicated: $0.2, run: Int($0.3)))
            }
        }
    }

    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func markDispatched(id: String, index: Int, fence: Int64, pass: DeliveryPass, run: Int, through: String) throws(StoreError) {
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
        guard changed == 1 else { throw ShardFence.lost(id: id, index: index, fence: fence) }
    }

    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func noteStopped(id: String, error: String) throws(StoreError) {
        // The broadcast row is held from loading it to storing the result: a claim's move to running (a
        // conditional update of the same row) waits for it, then sees the interrupted state and runs it again.
        try pool.transaction { (db) throws(StoreError) in
            let nowMs = try storeNowMs(in: db)
            guard let record = try broadcast(id: id, in: db, lock: true) else { return }
            let live = try hasLiveLease(id: id, now: nowMs, in: db)
            try store(record.after(.stopped(error: error, liveLease: live), now: nowMs), id: id, in: db)
        }
    }
}
