import PushCore

extension SQLiteRegistry {
    /// Registers `token` for `app` in one transaction: removes `oldToken` if present and different,
    /// upserts `token` and refreshes its last-registered time. With `channels` nil the device keeps its
    /// channels and inherits the old token's. Re-posting the same token is idempotent.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    @discardableResult
    public func register(
        app: String, token: DeviceToken, oldToken: DeviceToken? = nil, channels: [String]? = nil,
        environment: APNsEnvironment? = nil
    ) throws(StoreError) -> RegistrationOutcome {
        let request = RegistrationRequest(
            app: app, token: token, oldToken: oldToken, channels: channels, environment: environment)
        let normalized = try request.channels.map { (c) throws(StoreError) in try Channels.normalize(c) }
        let now = nowMs()
        return try write { (db) throws(StoreError) in
            try Self.register(request, channels: normalized, now: now, in: db)
        }
    }

    /// Several registrations in ONE transaction (group commit: one WAL append, one fsync with `FULL`).
    /// Each item runs in its own savepoint, so an invalid item fails alone and the others still commit.
    /// If the commit itself fails, every item reports that error.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func registerBatch(_ requests: [RegistrationRequest]) -> [Result<RegistrationOutcome, StoreError>] {
        guard !requests.isEmpty else { return [] }
        let now = nowMs()
        var results: [Result<RegistrationOutcome, StoreError>] = []
        results.reserveCapacity(requests.count)
        do throws(StoreError) {
            try write { (db) throws(StoreError) in
                for request in requests {
                    do throws(StoreError) {
                        let channels = try request.channels.map { (c) throws(StoreError) in try Channels.normalize(c) }
                        let outcome = try db.savepoint { () throws(StoreError) in
                            try Self.register(request, channels: channels, now: now, in: db)
                        }
                        results.append(.success(outcome))
                    } catch {
                        results.append(.failure(error))
                    }
                }
            }
        } catch {
            return requests.map { _ in .failure(error) }
        }
        return results
    }

    /// Removes `token` from `app`. Returns whether it was registered.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    @discardableResult
    public func unregister(app: String, token: DeviceToken) throws(StoreError) -> Bool {
        try write { (db) throws(StoreError) -> Bool in
            let delete = try db.statement("DELETE FROM devices WHERE app = ?1 AND token = ?2")
            try delete.bind(1, app)
            try delete.bind(2, token.hex)
            try delete.run()
            return db.changes > 0
        }
    }

    /// The stored row of one token: id, environment, channels, last-registered time.
    struct StoredDevice {
        var id: Int64
        var environment: String
        var channels: [String]
        var lastRegisteredMs: Int64
        var service: String
    }

    static func find(app: String, token: DeviceToken, in db: Connection) throws(StoreError) -> StoredDevice? {
        let select = try db.statement(
            "SELECT id, environment, channels, last_registered_ms, service FROM devices WHERE app = ?1 AND token = ?2")
        defer { select.reset() }
        try select.bind(1, app)
        try select.bind(2, token.hex)
        guard try select.step() else { return nil }
        return StoredDevice(
            id: select.int64(0), environment: select.text(1), channels: Channels.decode(select.text(2)),
            lastRegisteredMs: select.int64(3), service: select.text(4))
    }

    static func deleteDevice(id: Int64, in db: Connection) throws(StoreError) {
        let delete = try db.statement("DELETE FROM devices WHERE id = ?1")  // channels go by ON DELETE CASCADE
        try delete.bind(1, id)
        try delete.run()
    }

    /// A new device with its installation columns (``StoredInstallation/forNewDevice(_:replaced:now:)``): one
    /// statement, not an INSERT and an UPDATE of the same row.
    static let insertDevice = """
        INSERT INTO devices (app, token, id, environment, channels, created_ms, last_registered_ms,
            \(StoredInstallation.Columns.names.joined(separator: ", ")), service, subscription)
        VALUES (?1, ?2, (SELECT coalesce(max(id), 0) + 1 FROM devices), ?3, ?4, ?5, ?5,
            ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)
        RETURNING id
        """

    /// The body of one registration; the caller owns the transaction.
    static func register(
        _ request: RegistrationRequest, channels given: [String]?, now: Int64, in db: Connection
    ) throws(StoreError) -> RegistrationOutcome {
        var replaced: StoredDevice?
        var replacedInstallation: StoredInstallation?
        if let old = request.tokenToReplace, let row = try find(app: request.app, token: old, in: db) {
            try request.checkService(stored: row.service, role: "old token", key: old)
            replacedInstallation = try storedInstallation(id: row.id, in: db)
            try deleteDevice(id: row.id, in: db)
            replaced = row
        }
        let existing = try find(app: request.app, token: request.token, in: db)
        if let existing { try request.checkService(stored: existing.service, role: "token", key: request.token) }
        let (channels, environment) = request.resolved(
            channels: given, existing: existing.map { ($0.environment, $0.channels) },
            replaced: replaced.map { ($0.environment, $0.channels) })
        let id: Int64
        if let existing {
            let update = try db.statement(
                """
                UPDATE devices SET last_registered_ms = ?2, environment = ?3, channels = ?4, subscription = coalesce(?5, subscription)
                WHERE id = ?1
                """)
            try update.bind(1, existing.id)
            try update.bind(2, now)
            try update.bind(3, environment)
            try update.bind(4, Channels.encode(channels ?? existing.channels))
            try update.bind(5, request.storedSubscription)
            try update.run()
            id = existing.id
            if let channels, channels != existing.channels { try setChannels(channels, of: id, request, in: db) }
        } else {
            let insert = try db.statement(insertDevice)
            try insert.bind(1, request.app)
            try insert.bind(2, request.token.hex)
            try insert.bind(3, environment)
            try insert.bind(4, Channels.encode(channels ?? []))
            try insert.bind(5, now)
            let installation = StoredInstallation.forNewDevice(request.installation, replaced: replacedInstallation, now: now)
            try bind(installation?.columns, from: 6, to: insert)
            try insert.bind(17, request.service.rawValue)
            try insert.bind(18, request.storedSubscription)
            guard try insert.step() else { throw StoreError(.unknown(0), "insert returned no id") }
            id = insert.int64(0)
            insert.reset()
            if let channels, !channels.isEmpty { try setChannels(channels, of: id, request, in: db) }
        }
        if existing != nil {
            try applyInstallation(request.installation, id: id, replaced: replacedInstallation, now: now, in: db)
        }
        return .of(replacing: replaced == nil ? nil : request.oldToken, created: existing == nil)
    }

    /// Rewrites the channel index rows of one device.
    static func setChannels(
        _ channels: [String], of id: Int64, _ request: RegistrationRequest, in db: Connection
    ) throws(StoreError) {
        let clear = try db.statement("DELETE FROM device_channels WHERE device_id = ?1")
        try clear.bind(1, id)
        try clear.run()
        let insert = try db.statement(
            "INSERT INTO device_channels (app, channel, token, device_id) VALUES (?1, ?2, ?3, ?4)")
        for channel in channels {
            try insert.bind(1, request.app)
            try insert.bind(2, channel)
            try insert.bind(3, request.token.hex)
            try insert.bind(4, id)
            try insert.run()
        }
    }
}
