import PushCore

extension SQLiteRegistry {
    /// Registers a Live Activity token (see ``RegistryStore/registerLiveActivityToken(_:)``).
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    @discardableResult
    public func registerLiveActivityToken(_ request: LiveActivityRegistration) throws(StoreError) -> RegistrationOutcome {
        if let problem = request.problem { throw StoreError(.invalidInput, problem) }
        let channels = try request.channels.map { (c) throws(StoreError) in try Channels.normalize(c) } ?? []
        let now = nowMs()
        return try write { (db) throws(StoreError) -> RegistrationOutcome in
            // The token this one replaces: the same installation and type, or the same activity.
            var previous: String? = nil
            switch request.kind {
            case .pushToStart:
                let find = try db.statement("""
                    SELECT token FROM live_activity_tokens
                    WHERE app = ?1 AND kind = 'start' AND installation = ?2 AND attributes_type = ?3 AND token <> ?4
                    """)
                defer { find.reset() }
                try find.bind(1, request.app)
                try find.bind(2, request.installation)
                try find.bind(3, request.attributesType)
                try find.bind(4, request.token.hex)
                if try find.step() { previous = find.text(0) }
            case .update:
                let find = try db.statement("""
                    SELECT token FROM live_activity_tokens
                    WHERE app = ?1 AND kind = 'update' AND activity_id = ?2 AND token <> ?3
                    """)
                defer { find.reset() }
                try find.bind(1, request.app)
                try find.bind(2, request.activityId)
                try find.bind(3, request.token.hex)
                if try find.step() { previous = find.text(0) }
            }
            if let old = previous {
                let delete = try db.statement("DELETE FROM live_activity_tokens WHERE app = ?1 AND token = ?2")
                try delete.bind(1, request.app)
                try delete.bind(2, old)
                try delete.run()
            }
            let exists = try db.statement("SELECT 1 FROM live_activity_tokens WHERE app = ?1 AND token = ?2")
            defer { exists.reset() }
            try exists.bind(1, request.app)
            try exists.bind(2, request.token.hex)
            let existed = try exists.step()
            exists.reset()
            let upsert = try db.statement("""
                INSERT INTO live_activity_tokens (app, token, kind, environment, installation, attributes_type,
                    activity_id, channels, created_ms, last_registered_ms)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?9)
                ON CONFLICT (app, token) DO UPDATE SET kind = excluded.kind, environment = excluded.environment,
                    installation = excluded.installation, attributes_type = excluded.attributes_type,
                    activity_id = excluded.activity_id, channels = excluded.channels,
                    last_registered_ms = excluded.last_registered_ms
                """)
            try upsert.bind(1, request.app)
            try upsert.bind(2, request.token.hex)
            try upsert.bind(3, request.kind.column)
            try upsert.bind(4, (request.environment ?? .production).rawValue)
            try upsert.bind(5, request.installation)
            try upsert.bind(6, request.attributesType)
            try upsert.bind(7, request.activityId)
            try upsert.bind(8, Channels.encode(channels))
            try upsert.bind(9, now)
            try upsert.run()
            return .of(replacing: previous.map { DeviceToken(trustedCanonicalHex: $0) }, created: !existed)
        }
    }

    /// Removes a Live Activity token; false when it was not registered.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    @discardableResult
    public func unregisterLiveActivityToken(app: String, token: DeviceToken) throws(StoreError) -> Bool {
        try write { (db) throws(StoreError) -> Bool in
            let delete = try db.statement("DELETE FROM live_activity_tokens WHERE app = ?1 AND token = ?2")
            try delete.bind(1, app)
            try delete.bind(2, token.hex)
            try delete.run()
            return db.changes > 0
        }
    }

    /// Removes every update token of an activity (it ended); returns how many.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    @discardableResult
    public func endActivity(app: String, activityId: String) throws(StoreError) -> Int {
        try write { (db) throws(StoreError) -> Int in
            let delete = try db.statement("DELETE FROM live_activity_tokens WHERE app = ?1 AND kind = 'update' AND activity_id = ?2")
            try delete.bind(1, app)
            try delete.bind(2, activityId)
            try delete.run()
            return db.changes
        }
    }

    /// One keyset page of an app's Live Activity tokens matching `query`, tokens > `after` (hex) in token order.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func liveActivityTokens(_ query: LiveActivityTokenQuery, after: String, limit: Int) throws(StoreError) -> [LiveActivityToken] {
        try read { (db) throws(StoreError) -> [LiveActivityToken] in
            let select = try db.statement("""
                SELECT token, kind, environment, installation, attributes_type, activity_id, channels, created_ms, last_registered_ms
                FROM live_activity_tokens
                WHERE app = ?1 AND kind = ?2 AND token > ?3
                  AND (?4 IS NULL OR attributes_type = ?4) AND (?5 IS NULL OR activity_id = ?5)
                  AND (?6 IS NULL OR ',' || channels || ',' LIKE '%,' || ?6 || ',%')
                  AND (?7 IS NULL OR installation = ?7) AND (?8 IS NULL OR environment = ?8)
                ORDER BY token LIMIT ?9
                """)
            defer { select.reset() }
            try select.bind(1, query.app)
            try select.bind(2, query.kind.column)
            try select.bind(3, after)
            try select.bind(4, query.attributesType)
            try select.bind(5, query.activityId)
            try select.bind(6, query.channel)
            try select.bind(7, query.installation)
            try select.bind(8, query.environment?.rawValue)
            try select.bind(9, Int64(limit))
            var out: [LiveActivityToken] = []
            while try select.step() {
                out.append(LiveActivityToken(
                    token: DeviceToken(trustedCanonicalHex: select.text(0)),
                    kind: LiveActivityTokenKind(column: select.text(1)) ?? .update,
                    environment: APNsEnvironment(rawValue: select.text(2)) ?? .production,
                    installation: select.optionalText(3), attributesType: select.optionalText(4),
                    activityId: select.optionalText(5), channels: Channels.decode(select.text(6)),
                    createdMs: select.int64(7), lastRegisteredMs: select.int64(8)))
            }
            return out
        }
    }

    /// The prune of a token that is not a device: a Live Activity token, gated and logged like a device's.
    static func pruneLiveActivityToken(
        app: String, token: DeviceToken, _ request: PruneRequest, in db: Connection
    ) throws(StoreError) -> (keep: Bool, lastRegisteredMs: Int64)? {
        let find = try db.statement("SELECT last_registered_ms FROM live_activity_tokens WHERE app = ?1 AND token = ?2")
        defer { find.reset() }
        try find.bind(1, app)
        try find.bind(2, token.hex)
        guard try find.step() else { return nil }
        let last = find.int64(0)
        find.reset()
        let keep = PruneGate.keeps(request, lastRegisteredMs: last)
        if !keep {
            let delete = try db.statement("DELETE FROM live_activity_tokens WHERE app = ?1 AND token = ?2")
            try delete.bind(1, app)
            try delete.bind(2, token.hex)
            try delete.run()
        }
        return (keep, last)
    }
}
