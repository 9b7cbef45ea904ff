import PushCore

/// Installation fields and users on SQLite: stored with the device row, written only when a registration gives
/// (or carries over) a field whose value differs from what is stored, so an app re-sending the same fields at every
/// launch costs one indexed read more than a token-only registration.
extension SQLiteRegistry {
    /// The installation columns, in ``StoredInstallation/init(row:at:)`` order.
    static let installationColumns = """
        installation, user_id, time_zone, locale, app_version, os_version, tags, tz_history, tz_changed_ms
        """

    /// One device's stored installation, with its zone history.
    static func storedInstallation(id: Int64, in db: Connection) throws(StoreError) -> StoredInstallation? {
        let select = try db.statement("SELECT \(installationColumns) FROM devices WHERE id = ?1")
        defer { select.reset() }
        try select.bind(1, id)
        guard try select.step() else { return nil }
        return StoredInstallation(row: select, at: 0)
    }

    /// Writes the installation fields of a registration whose device was already stored (the caller owns the
    /// transaction; a new device gets them in its INSERT: ``StoredInstallation/forNewDevice(_:replaced:now:)``): the
    /// request's, else the device's own, else those of the token it replaced. A changed zone is appended to the zone
    /// history. Nothing is written when nothing changes.
    static func applyInstallation(
        _ update: InstallationUpdate, id: Int64, replaced: StoredInstallation?, now: Int64, in db: Connection
    ) throws(StoreError) {
        guard StoredInstallation.isWritten(by: update, replaced: replaced) else { return }
        let current = try storedInstallation(id: id, in: db)
        let next = StoredInstallation.after(update, current: current, replaced: replaced, now: now)
        guard next != current else { return }
        let write = try db.statement("""
            UPDATE devices SET installation = ?2, user_id = ?3, time_zone = ?4, locale = ?5, app_version = ?6,
                app_version_key = ?7, os_version = ?8, os_version_key = ?9, tags = ?10, tz_history = ?11, tz_changed_ms = ?12
            WHERE id = ?1
            """)
        try write.bind(1, id)
        try bind(next.columns, from: 2, to: write)
        try write.run()
    }

    /// Binds ``StoredInstallation/Columns`` to parameters `first`… `first + 10`, in ``StoredInstallation/Columns/names``
    /// order (nil: all NULL).
    static func bind(_ c: StoredInstallation.Columns?, from first: Int32, to statement: Statement) throws(StoreError) {
        try statement.bind(first, c?.installation)
        try statement.bind(first + 1, c?.user)
        try statement.bind(first + 2, c?.timeZone)
        try statement.bind(first + 3, c?.locale)
        try statement.bind(first + 4, c?.appVersion)
        try statement.bind(first + 5, c?.appVersionKey)
        try statement.bind(first + 6, c?.osVersion)
        try statement.bind(first + 7, c?.osVersionKey)
        try statement.bind(first + 8, c?.tags)
        try statement.bind(first + 9, c?.zoneHistory)
        try statement.bind(first + 10, c?.zoneChangedMs)
    }

    /// The installation fields of one registered device (nil: not registered).
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func installation(app: String, token: DeviceToken) throws(StoreError) -> Installation? {
        try read { (db) throws(StoreError) -> Installation? in
            let select = try db.statement("SELECT \(Self.installationColumns) FROM devices WHERE app = ?1 AND token = ?2")
            defer { select.reset() }
            try select.bind(1, app)
            try select.bind(2, token.hex)
            return try select.step() ? StoredInstallation(row: select, at: 0).fields : nil
        }
    }

    /// One keyset page of `user`'s devices (token > `after`), in token order, through `devices_user`.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func userDevices(app: String, user: String, after: String, limit: Int) throws(StoreError) -> [RegisteredDevice] {
        try read { (db) throws(StoreError) -> [RegisteredDevice] in
            let select = try db.statement("""
                SELECT d.token, d.environment, d.channels, d.created_ms, d.last_registered_ms, d.last_success_ms,
                    d.service, d.subscription, \(Self.installationColumns)
                FROM devices d INDEXED BY devices_user WHERE d.app = ?1 AND d.user_id = ?2 AND d.token > ?3
                ORDER BY d.token LIMIT ?4
                """)
            defer { select.reset() }
            try select.bind(1, app)
            try select.bind(2, user)
            try select.bind(3, after)
            try select.bind(4, Int64(limit))
            var out: [RegisteredDevice] = []
            while try select.step() {
                var device = try SQLiteRegistry.device(from: select)
                device.installation = StoredInstallation(row: select, at: 8).fields
                out.append(device)
            }
            return out
        }
    }

    /// Detaches `user` from every device of `app` (a forced log-out); returns how many devices had it.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    @discardableResult
    public func detachUser(app: String, user: String) throws(StoreError) -> Int {
        try write { (db) throws(StoreError) -> Int in
            let update = try db.statement("UPDATE devices INDEXED BY devices_user SET user_id = NULL WHERE app = ?1 AND user_id = ?2")
            try update.bind(1, app)
            try update.bind(2, user)
            try update.run()
            return db.changes
        }
    }
}

extension StoredInstallation {
    /// From ``SQLiteRegistry/installationColumns`` starting at column `at`.
    init(row: Statement, at i: Int32) {
        fields = Installation(
            installation: row.optionalText(i), user: row.optionalText(i + 1), timeZone: row.optionalText(i + 2),
            locale: row.optionalText(i + 3), appVersion: row.optionalText(i + 4), osVersion: row.optionalText(i + 5),
            tags: Installation.tags(fromJSON: row.optionalText(i + 6)))
        zoneHistory = TimeZoneHistory(stored: row.optionalText(i + 7))
        zoneChangedMs = row.optionalInt64(i + 8)
    }
}
