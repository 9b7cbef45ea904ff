import PushCore

extension SQLiteRegistry {
    /// How many devices `app` has, optionally only those in `channel` and/or `environment`.
    /// Uses the (app, token) index, or the (app, channel, token) index with a channel.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func count(
        app: String, channel: String? = nil, environment: APNsEnvironment? = nil
    ) throws(StoreError) -> Int {
        if let channel { try Channels.validate(channel) }
        return try read { (db) throws(StoreError) -> Int in
            try Self.count(app: app, channel: channel, environment: environment, in: db)
        }
    }

    /// The body of ``count(app:channel:environment:)`` on any connection (a write transaction counts on the writer).
    static func count(app: String, channel: String?, environment: APNsEnvironment?, in db: Connection) throws(StoreError) -> Int {
        let sql: String
        switch (channel, environment) {
        case (nil, nil): sql = "SELECT count(*) FROM devices WHERE app = ?1"
        case (nil, _?): sql = "SELECT count(*) FROM devices WHERE app = ?1 AND environment = ?3"
        case (_?, nil): sql = "SELECT count(*) FROM device_channels WHERE app = ?1 AND channel = ?2"
        case (_?, _?):
            sql = """
                SELECT count(*) FROM device_channels c JOIN devices d ON d.id = c.device_id
                WHERE c.app = ?1 AND c.channel = ?2 AND d.environment = ?3
                """
        }
        let select = try db.statement(sql)
        defer { select.reset() }
        try select.bind(1, app)
        if let channel { try select.bind(2, channel) }
        if let environment { try select.bind(3, environment.rawValue) }
        return try select.step() ? Int(select.int64(0)) : 0
    }

    /// One keyset page of token hex strings.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func tokenPage(
        app: String, channel: String?, environment: APNsEnvironment?, after: String, limit: Int
    ) throws(StoreError) -> [String] {
        try read { (db) throws(StoreError) -> [String] in
            let sql = channel == nil
                ? """
                SELECT d.token FROM devices d
                WHERE d.app = ?1 AND d.token > ?2 AND (?3 IS NULL OR d.environment = ?3)
                ORDER BY d.token LIMIT ?4
                """
                : """
                SELECT c.token FROM device_channels c JOIN devices d ON d.id = c.device_id
                WHERE c.app = ?1 AND c.channel = ?5 AND c.token > ?2 AND (?3 IS NULL OR d.environment = ?3)
                ORDER BY c.token LIMIT ?4
                """
            let select = try db.statement(sql)
            defer { select.reset() }
            try select.bind(1, app)
            try select.bind(2, after)
            try select.bind(3, environment?.rawValue)
            try select.bind(4, Int64(limit))
            if let channel { try select.bind(5, channel) }
            var tokens: [String] = []
            tokens.reserveCapacity(limit)
            while try select.step() { tokens.append(select.text(0)) }
            return tokens
        }
    }

    /// One keyset page: devices with token > `after`, in token order.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func page(
        app: String, channel: String?, environment: APNsEnvironment?, after: String, limit: Int
    ) throws(StoreError) -> [RegisteredDevice] {
        if let channel { try Channels.validate(channel) }
        return try read { (db) throws(StoreError) -> [RegisteredDevice] in
            let columns = "d.token, d.environment, d.channels, d.created_ms, d.last_registered_ms, d.last_success_ms, d.service, d.subscription"
            let sql = channel == nil
                ? """
                SELECT \(columns) FROM devices d
                WHERE d.app = ?1 AND d.token > ?2 AND (?3 IS NULL OR d.environment = ?3)
                ORDER BY d.token LIMIT ?4
                """
                : """
                SELECT \(columns) FROM device_channels c JOIN devices d ON d.id = c.device_id
                WHERE c.app = ?1 AND c.channel = ?5 AND c.token > ?2 AND (?3 IS NULL OR d.environment = ?3)
                ORDER BY c.token LIMIT ?4
                """
            let select = try db.statement(sql)
            defer { select.reset() }  // ends the read transaction before the caller sees the batch
            try select.bind(1, app)
            try select.bind(2, after)
            try select.bind(3, environment?.rawValue)
            try select.bind(4, Int64(limit))
            if let channel { try select.bind(5, channel) }
            var devices: [RegisteredDevice] = []
            devices.reserveCapacity(min(limit, 10_000))
            while try select.step() { devices.append(try SQLiteRegistry.device(from: select)) }
            return devices
        }
    }
}

