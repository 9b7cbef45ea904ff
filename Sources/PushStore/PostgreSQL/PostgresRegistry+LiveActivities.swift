import PostgresNIO
import PushCore

extension PostgresRegistry {
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    @discardableResult
    public func registerLiveActivityToken(_ request: LiveActivityRegistration) throws(StoreError) -> RegistrationOutcome {
        if let problem = request.problem { throw StoreError(.invalidInput, problem) }
        let channels = Channels.encode(try request.channels.map { (c) throws(StoreError) in try Channels.normalize(c) } ?? [])
        let (app, hex, kind) = (request.app, request.token.hex, request.kind.column)
        let environment = (request.environment ?? .production).rawValue
        let (installation, type, activity) = (request.installation, request.attributesType, request.activityId)
        return try pool.transaction { (db) throws(StoreError) -> RegistrationOutcome in
            // Serialise registrations of the same installation and type (or activity): the replaced token is
            // then found exactly once.
            let key = "la:\(app):" + (request.kind == .pushToStart ? "\(installation ?? ""):\(type ?? "")" : "a:\(activity ?? "")")
            try db.query("SELECT pg_advisory_xact_lock(hashtext(\(key)))")
            let previous: String?
            if request.kind == .pushToStart {
                previous = try db.row("""
                    DELETE FROM live_activity_tokens WHERE app = \(app) AND kind = 'start' AND installation = \(installation)
                        AND attributes_type = \(type) AND token <> \(hex) RETURNING token
                    """, as: (String).self)
            } else {
                previous = try db.row("""
                    DELETE FROM live_activity_tokens WHERE app = \(app) AND kind = 'update' AND activity_id = \(activity)
                        AND token <> \(hex) RETURNING token
                    """, as: (String).self)
            }
            guard let isNew = try db.row("""
                INSERT INTO live_activity_tokens AS t (app, token, kind, environment, installation, attributes_type,
                    activity_id, channels, created_ms, last_registered_ms)
                SELECT \(app), \(hex), \(kind), \(environment), \(installation), \(type), \(activity), \(channels), n.ms, n.ms
                FROM (SELECT coalesce(\(now)::bigint, pp_now_ms()) AS ms) n
                ON CONFLICT (app, token) DO UPDATE SET kind = excluded.kind, environment = excluded.environment,
                    installation = excluded.installation, attributes_type = excluded.attributes_type,
                    activity_id = excluded.activity_id, channels = excluded.channels,
                    last_registered_ms = excluded.last_registered_ms
                RETURNING (xmax = 0)
                """, as: (Bool).self)
            else { throw StoreError(.unknown(0), "insert returned nothing") }
            return .of(replacing: previous.map { DeviceToken(trustedCanonicalHex: $0) }, created: isNew)
        }
    }

    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    @discardableResult
    public func unregisterLiveActivityToken(app: String, token: DeviceToken) throws(StoreError) -> Bool {
        let hex = token.hex
        return try pool.withConnection { (db) throws(StoreError) -> Bool in
            try db.changes("DELETE FROM live_activity_tokens WHERE app = \(app) AND token = \(hex)") > 0
        }
    }

    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    @discardableResult
    public func endActivity(app: String, activityId: String) throws(StoreError) -> Int {
        try pool.withConnection { (db) throws(StoreError) -> Int in
            try db.changes("DELETE FROM live_activity_tokens WHERE app = \(app) AND kind = 'update' AND activity_id = \(activityId)")
        }
    }

    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func liveActivityTokens(_ query: LiveActivityTokenQuery, after: String, limit: Int) throws(StoreError) -> [LiveActivityToken] {
        let (app, kind, type, activity) = (query.app, query.kind.column, query.attributesType, query.activityId)
        let (channel, installation, environment) = (query.channel, query.installation, query.environment?.rawValue)
        let limit = Int64(limit)
        return try pool.withConnection { (db) throws(StoreError) -> [LiveActivityToken] in
            let rows = try db.rows("""
                SELECT token, kind, environment, installation, attributes_type, activity_id, channels, created_ms, last_registered_ms
                FROM live_activity_tokens
                WHERE app = \(app) AND kind = \(kind) AND token > \(after)
                  AND (\(type)::text IS NULL OR attributes_type = \(type)) AND (\(activity)::text IS NULL OR activity_id = \(activity))
                  AND (\(channel)::text IS NULL OR \(channel) = ANY (string_to_array(channels, ',')))
                  AND (\(installation)::text IS NULL OR installation = \(installation))
                  AND (\(environment)::text IS NULL OR environment = \(environment))
                ORDER BY token LIMIT \(limit)
                """, as: (String, String, String, String?, String?, String?, String, Int64, Int64).self)
            return rows.map { r in
                LiveActivityToken(
                    token: DeviceToken(trustedCanonicalHex: r.0), kind: LiveActivityTokenKind(column: r.1) ?? .update,
                    environment: APNsEnvironment(rawValue: r.2) ?? .production, installation: r.3, attributesType: r.4,
                    activityId: r.5, channels: Channels.decode(r.6), createdMs: r.7, lastRegisteredMs: r.8)
            }
        }
    }

    /// The prune of a token that is not a device: a Live Activity token, gated and logged like a device's.
    func pruneLiveActivityToken(
        app: String, token: DeviceToken, _ request: PruneRequest, in db: PostgresSession
    ) throws(StoreError) -> (keep: Bool, lastRegisteredMs: Int64)? {
        let hex = token.hex
        guard let last = try db.row("""
            SELECT last_registered_ms FROM live_activity_tokens WHERE app = \(app) AND token = \(hex) FOR UPDATE
            """, as: (Int64).self)
        else { return nil }
        let keep = PruneGate.keeps(request, lastRegisteredMs: last)
        if !keep { try db.query("DELETE FROM live_activity_tokens WHERE app = \(app) AND token = \(hex)") }
        return (keep, last)
    }
}
