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

    /// Writes a registration's installation fields (see ``SQLiteRegistry/applyInstallation(_:id:existing:replaced:now:in:)``).
    func applyInstallation(
        _ update: InstallationUpdate, id: Int64, existing: Bool, replaced: StoredInstallation?, in db: PostgresSession
    ) throws(StoreError) {
        guard !update.isEmpty || !(replaced?.fields.isEmpty ?? true) else { return }
        let current = existing ? try storedInstallation(id: id, in: db) : nil
        let nowMs = try db.row("SELECT coalesce(\(now)::bigint, pp_now_ms())", as: (Int64).self) ?? Int64(0)
        let next = StoredInstallation.after(update, current: current, replaced: replaced, now: nowMs)
        guard next != current else { return }
        let f = next.fields
        let (appKey, osKey) = (f.appVersion.flatMap(VersionOrder.key), f.osVersion.flatMap(VersionOrder.key))
        try db.query("""
            UPDATE devices SET installation = \(f.installation), user_id = \(f.user), time_zone = \(f.timeZone),
                locale = \(f.locale), app_version = \(f.appVersion), app_version_key = \(appKey), os_version = \(f.osVersion),
                os_version_key = \(osKey), tags = \(f.tagsJSON)::jsonb, tz_history = \(next.zoneHistory.storedText)::jsonb,
                tz_changed_ms = \(next.zoneChangedMs)
            WHERE id = \(id)
            """)
    }

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

    public func userDevices(app: String, user: String, after: String, limit: Int) throws(StoreError) -> [RegisteredDevice] {
        try pool.withConnection { (db) throws(StoreError) -> [RegisteredDevice] in
            var binds = Self.binds(app, user, after)
            binds.append(Int64(limit))
            let rows = try db.rows(
                PostgresQuery(unsafeSQL: """
                    SELECT token, environment, channels, created_ms, last_registered_ms, last_success_ms, \(Self.installationColumns)
                    FROM devices WHERE app = $1 AND user_id = $2 AND token > $3 ORDER BY token LIMIT $4
                    """, binds: binds),
                as: (String, String, String, Int64, Int64, Int64?, String?, String?, String?, String?, String?, String?, String?, String?, Int64?).self)
            return rows.map { r in
                var device = Self.device((r.0, r.1, r.2, r.3, r.4, r.5))
                device.installation = Self.storedInstallation((r.6, r.7, r.8, r.9, r.10, r.11, r.12, r.13, r.14)).fields
                return device
            }
        }
    }

    @discardableResult
    public func detachUser(app: String, user: String) throws(StoreError) -> Int {
        try pool.withConnection { (db) throws(StoreError) -> Int in
            try db.changes("UPDATE devices SET user_id = NULL WHERE app = \(app) AND user_id = \(user)")
        }
    }
}

extension PostgresRegistry {
    /// The installation fields of a group-committed batch (requests without an old token or channels, already
    /// upserted as one statement): one read of the devices' stored fields and one multi-row update of those that
    /// change, whatever the batch's size — what apps send at every launch stays three statements per batch.
    func applyInstallationBatch(_ requests: [RegistrationRequest], outcomes: [RegistrationOutcome], in db: PostgresSession) throws(StoreError) {
        let given = zip(requests, outcomes).filter { !$0.0.installation.isEmpty }
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
        for (request, outcome) in given {
            guard let row = stored[request.app + "\u{0}" + request.token.hex] else { continue }
            // A device this batch created has no earlier zone to remember.
            let current: StoredInstallation? = outcome == .created ? nil : row.installation
            let next = StoredInstallation.after(request.installation, current: current, replaced: nil, now: row.now)
            guard next != row.installation else { continue }
            let f = next.fields
            func text(_ s: String?) -> JSONValue { s.map { .string($0) } ?? .null }
            updates.append(.object([
                ("id", .int(row.id)), ("installation", text(f.installation)), ("user_id", text(f.user)), ("time_zone", text(f.timeZone)),
                ("locale", text(f.locale)), ("app_version", text(f.appVersion)), ("app_version_key", text(f.appVersion.flatMap(VersionOrder.key))),
                ("os_version", text(f.osVersion)), ("os_version_key", text(f.osVersion.flatMap(VersionOrder.key))),
                ("tags", f.tagsJSON.flatMap { try? JSONValue(parsing: $0) } ?? .null),
                ("tz_history", next.zoneHistory.storedText.flatMap { try? JSONValue(parsing: $0) } ?? .null),
                ("tz_changed_ms", next.zoneChangedMs.map { .int($0) } ?? .null),
            ]))
        }
        guard !updates.isEmpty else { return }
        let json = JSONValue.array(updates).encodedString
        try db.query("""
            UPDATE devices AS d SET installation = u.installation, user_id = u.user_id, time_zone = u.time_zone, locale = u.locale,
                app_version = u.app_version, app_version_key = u.app_version_key, os_version = u.os_version,
                os_version_key = u.os_version_key, tags = u.tags, tz_history = u.tz_history, tz_changed_ms = u.tz_changed_ms
            FROM jsonb_to_recordset(\(json)::jsonb) AS u (id bigint, installation text, user_id text, time_zone text, locale text,
                app_version text, app_version_key text, os_version text, os_version_key text, tags jsonb, tz_history jsonb,
                tz_changed_ms bigint)
            WHERE d.id = u.id
            """)
    }
}
