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

    /// Writes a registration's installation fields (the caller owns the transaction): the request's, else the
    /// device's own, else those of the token it replaced. A changed zone is appended to the zone history.
    static func applyInstallation(
        _ update: InstallationUpdate, id: Int64, existing: Bool, replaced: StoredInstallation?, now: Int64, in db: Connection
    ) throws(StoreError) {
        guard !update.isEmpty || !(replaced?.fields.isEmpty ?? true) else { return }
        let current = existing ? try storedInstallation(id: id, in: db) : nil
        let next = StoredInstallation.after(update, current: current, replaced: replaced, now: now)
        guard next != current else { return }
        let write = try db.statement("""
            UPDATE devices SET installation = ?2, user_id = ?3, time_zone = ?4, locale = ?5, app_version = ?6,
                app_version_key = ?7, os_version = ?8, os_version_key = ?9, tags = ?10, tz_history = ?11, tz_changed_ms = ?12
            WHERE id = ?1
            """)
        let f = next.fields
        try write.bind(1, id)
        try write.bind(2, f.installation)
        try write.bind(3, f.user)
        try write.bind(4, f.timeZone)
        try write.bind(5, f.locale)
        try write.bind(6, f.appVersion)
        try write.bind(7, f.appVersion.flatMap(VersionOrder.key))
        try write.bind(8, f.osVersion)
        try write.bind(9, f.osVersion.flatMap(VersionOrder.key))
        try write.bind(10, f.tagsJSON)
        try write.bind(11, next.zoneHistory.storedText)
        try write.bind(12, next.zoneChangedMs)
        try write.run()
    }

    /// The installation fields of one registered device (nil: not registered).
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
    public func userDevices(app: String, user: String, after: String, limit: Int) throws(StoreError) -> [RegisteredDevice] {
        try read { (db) throws(StoreError) -> [RegisteredDevice] in
            let select = try db.statement("""
                SELECT d.token, d.environment, d.channels, d.created_ms, d.last_registered_ms, d.last_success_ms,
                    \(Self.installationColumns)
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
                device.installation = StoredInstallation(row: select, at: 6).fields
                out.append(device)
            }
            return out
        }
    }

    /// Detaches `user` from every device of `app` (a forced log-out); returns how many devices had it.
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

/// The installation columns of one row, with the zone history that local-time waves read.
struct StoredInstallation: Equatable {
    var fields: Installation
    var zoneHistory: TimeZoneHistory
    var zoneChangedMs: Int64?

    init(fields: Installation, zoneHistory: TimeZoneHistory = TimeZoneHistory(), zoneChangedMs: Int64? = nil) {
        self.fields = fields
        self.zoneHistory = zoneHistory
        self.zoneChangedMs = zoneChangedMs
    }

    /// From ``SQLiteRegistry/installationColumns`` starting at column `at`.
    init(row: Statement, at i: Int32) {
        fields = Installation(
            installation: row.optionalText(i), user: row.optionalText(i + 1), timeZone: row.optionalText(i + 2),
            locale: row.optionalText(i + 3), appVersion: row.optionalText(i + 4), osVersion: row.optionalText(i + 5),
            tags: Installation.tags(fromJSON: row.optionalText(i + 6)))
        zoneHistory = TimeZoneHistory(stored: row.optionalText(i + 7))
        zoneChangedMs = row.optionalInt64(i + 8)
    }

    /// What a registration leaves: the fields after `update`; a device replacing an old token takes the old one's
    /// zone history too (it is the same installation); a zone that changes is recorded in the history.
    static func after(_ update: InstallationUpdate, current: StoredInstallation?, replaced: StoredInstallation?, now: Int64)
        -> StoredInstallation
    {
        let fields = update.applied(to: current?.fields, replaced: replaced?.fields)
        var next = current ?? replaced.map { StoredInstallation(fields: $0.fields, zoneHistory: $0.zoneHistory, zoneChangedMs: $0.zoneChangedMs) }
            ?? StoredInstallation(fields: Installation())
        let before = next.fields.timeZone
        let hadRow = current != nil || replaced != nil
        next.fields = fields
        if hadRow, before != fields.timeZone {
            next.zoneHistory = next.zoneHistory.recording(old: before, atMs: now)
            next.zoneChangedMs = now
        }
        return next
    }
}
