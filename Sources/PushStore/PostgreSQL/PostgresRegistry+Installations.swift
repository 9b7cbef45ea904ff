import PostgresNIO
import PushCore

/// Installation fields and users on PostgreSQL (see `SQLiteRegistry+Installations.swift`: the same rules, one write only
/// when something changed).
extension PostgresRegistry {
    static let installationColumns = """
        installation, user_id, time_zone, locale, app_version, os_version, tags::text, tz_history::text, tz_changed_ms
        """

    typealias InstallationRow = (String?, String?, String?, String?, String?, String?, String?, String?, Int64?)

    static func storedInstallation(_ row: InstallationRow) -> StoredInstallation {
        StoredInstallation(
            fields: Installation(
                installation: row.0, user: row.1, timeZone: row.2, locale: row.3, appVersion: row.4, osVersion: row.5,
                tags: Installation.tags(fromJSON: row.6)),
            zoneHistory: TimeZoneHistory(stored: row.7), zoneChangedMs: row.8)
    }

    func storedInstallation(id: Int64, in db: PostgresSession) throws(StoreError) -> StoredInstallation? {
        try db.row(
            PostgresQuery(unsafeSQL: "SELECT \(Self.installationColumns) FROM devices WHERE id = $1", binds: {
                var b = PostgresBindings()
                b.append(id)
                return b
            }()),
            as: InstallationRow.self
        ).map(Self.storedInstallation)
    }

    /// The store's clock (the test clock, else the database's), as registrations stamp zone changes with it.
    func storeNowMs(in db: PostgresSession) throws(StoreError) -> Int64 {
        try db.row("SELECT coalesce(\(now)::bigint, pp_now_ms())", as: (Int64).self) ?? Int64(0)
    }

    /// Writes the installation fields of a registration whose device was already stored (see
    /// ``SQLiteRegistry/applyInstallation(_:id:replaced:now:in:)``; a new device gets them in its INSERT).
    func applyInstallation(_ update: InstallationUpdate, id: Int64, replaced: StoredInstallation?, in db: PostgresSession) throws(StoreError) {
        guard StoredInstallation.isWritten(by: update, replaced: replaced) else { return }
        let current = try storedInstallation(id: id, in: db)
        let nowMs = try storeNowMs(in: db)
        let next = StoredInstallation.after(update, current: current, replaced: replaced, now: nowMs)
        guard next != current else { return }
        let c = next.columns
        try db.query("""
            UPDATE devices SET installation = \(c.installation), user_id = \(c.user), time_zone = \(c.timeZone),
                locale = \(c.locale), app_version = \(c.appVersion), app_version_key = \(c.appVersionKey), os_version = \(c.osVersion),
                os_version_key = \(c.osVersionKey), tags = \(c.tags)::jsonb, tz_history = \(c.zoneHistory)::jsonb,
                tz_changed_ms = \(c.zoneChangedMs)
            WHERE id = \(id)
            """)
    }

    /// ``StoredInstallation/Columns/names``, for an INSERT's column list.
    static let installationNames = StoredInstallation.Columns.names.joined(separator: ", ")

    /// The record `jsonb_to_record(…) AS x (…)` reads ``StoredInstallation/Columns/json(id:)`` into (tags and the zone
    /// history as JSON text, cast by ``installationValues``).
    static let installationRecord = StoredInstallation.Columns.names
        .map { $0 == "tz_changed_ms" ? "\($0) bigint" : "\($0) text" }.joined(separator: ", ")

    /// The columns of `x` (see ``installationRecord``) as `devices` stores them, in ``StoredInstallation/Columns/names`` order.
    static let installationValues = StoredInstallation.Columns.names
        .map { $0 == "tags" || $0 == "tz_history" ? "x.\($0)::jsonb" : "x.\($0)" }.joined(separator: ", ")

    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func installation(app: String, token: DeviceToken) throws(StoreError) -> Installation? {
        let hex = token.hex
        return try pool.withConnection { (db) throws(StoreError) -> Installation? in
            try db.row(
                PostgresQuery(unsafeSQL: "SELECT \(Self.installationColumns) FROM devices WHERE app = $1 AND token = $2",
                              binds: Self.binds(app, hex)),
                as: InstallationRow.self
            ).map { Self.storedInstallation($0).fields }
        }
    }

    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func userDevices(app: String, user: String, after: String, limit: Int) throws(StoreError) -> [RegisteredDevice] {
        try pool.withConnection { (db) throws(StoreError) -> [RegisteredDevice] in
            var binds = Self.binds(app, user, after)
            binds.append(Int64(limit))
            let rows = try db.rows(
                PostgresQuery(unsafeSQL: """
                    SELECT token, environment, channels, created_ms, last_registered_ms, last_success_ms, service, subscription,
                        \(Self.installationColumns)
                    FROM devices WHERE app = $1 AND user_id = $2 AND token > $3 ORDER BY token LIMIT $4
                    """, binds: binds),
                as: (String, String, String, Int64, Int64, Int64?, String, String?,
                     String?, String?, String?, String?, String?, String?, String?, String?, Int64?).self)
            return rows.map { r in
                var device = Self.device((r.0, r.1, r.2, r.3, r.4, r.5, r.6, r.7))
                device.installation = Self.storedInstallation((r.8, r.9, r.10, r.11, r.12, r.13, r.14, r.15, r.16)).fields
                return device
            }
        }
    }

    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    @discardableResult
    public func detachUser(app: String, user: String) throws(StoreError) -> Int {
        try pool.withConnection { (db) throws(StoreError) -> Int in
            try db.changes("UPDATE devices SET user_id = NULL WHERE app = \(app) AND user_id = \(user)")
        }
    }
}

extension PostgresRegistry {
    /// The installation fields of a group-committed batch's devices that were already stored (requests without an
    /// old token or channels, upserted as one statement that wrote the fields of the devices it created): one read of
    /// their stored fields and one multi-row update of those that change, whatever the batch's size — what apps send
    /// at every launch stays three statements per batch, and a batch of new devices one.
    func applyInstallationBatch(_ requests: [RegistrationRequest], outcomes: [RegistrationOutcome], in db: PostgresSession) throws(StoreError) {
        let given = zip(requests, outcomes).filter { !$0.0.installation.isEmpty && $0.1 != .created }
        guard !given.isEmpty else { return }
        let apps = given.map(\.0.app), tokens = given.map(\.0.token.hex)
        let rows = try db.rows("""
            SELECT d.id, d.app, d.token, d.installation, d.user_id, d.time_zone, d.locale, d.app_version, d.os_version,
                d.tags::text, d.tz_history::text, d.tz_changed_ms, coalesce(\(now)::bigint, pp_now_ms())
            FROM unnest(\(apps)::text[], \(tokens)::text[]) AS r (a, t) JOIN devices d ON d.app = r.a AND d.token = r.t
            """, as: (Int64, String, String, String?, String?, String?, String?, String?, String?, String?, String?, Int64?, Int64).self)
        var stored: [String: (id: Int64, installation: StoredInstallation, now: Int64)] = [:]
        for r in rows {
            stored[r.1 + "\u{0}" + r.2] = (r.0, Self.storedInstallation((r.3, r.4, r.5, r.6, r.7, r.8, r.9, r.10, r.11)), r.12)
        }
        var updates: [JSONValue] = []
        for (request, _) in given {
            guard let row = stored[request.app + "\u{0}" + request.token.hex] else { continue }
            let next = StoredInstallation.after(request.installation, current: row.installation, replaced: nil, now: row.now)
            guard next != row.installation else { continue }
            updates.append(next.columns.json(id: row.id))
        }
        guard !updates.isEmpty else { return }
        let json = JSONValue.array(updates).encodedString
        try db.query("""
            UPDATE devices AS d SET installation = u.installation, user_id = u.user_id, time_zone = u.time_zone, locale = u.locale,
                app_version = u.app_version, app_version_key = u.app_version_key, os_version = u.os_version,
                os_version_key = u.os_version_key, tags = u.tags::jsonb, tz_history = u.tz_history::jsonb, tz_changed_ms = u.tz_changed_ms
            FROM jsonb_to_recordset(\(json)::jsonb) AS u (id bigint, \(unescaped: Self.installationRecord))
            WHERE d.id = u.id
            """)
    }
}

extension StoredInstallation.Columns {
    /// One JSON object keyed by ``names`` (NULL columns left out; tags and the zone history as JSON text), with the
    /// device's `id` when given: how PostgreSQL takes a batch's rows (`jsonb_to_record`, ``PostgresRegistry/installationRecord``).
    func json(id: Int64? = nil) -> JSONValue {
        var pairs: [(String, JSONValue)] = id.map { [("id", .int($0))] } ?? []
        for (name, value) in zip(Self.names, text) { if let value { pairs.append((name, .string(value))) } }
        if let zoneChangedMs { pairs.append(("tz_changed_ms", .int(zoneChangedMs))) }
        return .object(pairs)
    }
}
