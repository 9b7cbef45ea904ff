import PostgresNIO
import PushCore

/// Registering and unregistering devices. (The twin of `SQLiteRegistry+Registration.swift`.)
extension PostgresRegistry {
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    @discardableResult
    public func register(
        app: String, token: DeviceToken, oldToken: DeviceToken? = nil, channels: [String]? = nil,
        environment: APNsEnvironment? = nil
    ) throws(StoreError) -> RegistrationOutcome {
        let request = RegistrationRequest(app: app, token: token, oldToken: oldToken, channels: channels, environment: environment)
        let normalized = try channels.map { (c) throws(StoreError) in try Channels.normalize(c) }
        return try pool.transaction { (db) throws(StoreError) in try register(request, channels: normalized, in: db) }
    }

    /// One transaction for the whole batch. Plain registrations (no old token, no channels: what apps send
    /// at every launch) are written as one multi-row upsert in key order, their installation fields as one read and
    /// one multi-row update; the others one by one, each in a savepoint so one failure does not undo the rest.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func registerBatch(_ requests: [RegistrationRequest]) -> [Result<RegistrationOutcome, StoreError>] {
        guard !requests.isEmpty else { return [] }
        var results = [Result<RegistrationOutcome, StoreError>?](repeating: nil, count: requests.count)
        var plain: [Int] = []
        var seen = Set<String>()
        for (i, r) in requests.enumerated() where r.oldToken == nil && r.channels == nil && r.service == .apns {
            if seen.insert(r.app + "\u{0}" + r.token.hex).inserted { plain.append(i) }
        }
        do throws(StoreError) {
            try pool.transaction { (db) throws(StoreError) in
                if !plain.isEmpty {
                    let sorted = plain.sorted { (requests[$0].app, requests[$0].token.hex) < (requests[$1].app, requests[$1].token.hex) }
                    let outcomes = try upsertPlain(sorted.map { requests[$0] }, in: db)
                    // A key held by a device of another service was left alone by the upsert: the one-by-one path
                    // below refuses it with the reason.
                    let written = zip(sorted, outcomes).compactMap { i, outcome in outcome.map { (i, $0) } }
                    for (i, outcome) in written { results[i] = .success(outcome) }
                    try applyInstallationBatch(written.map { requests[$0.0] }, outcomes: written.map(\.1), in: db)
                }
                for (i, request) in requests.enumerated() where results[i] == nil {
                    do throws(StoreError) {
                        let channels = try request.channels.map { (c) throws(StoreError) in try Channels.normalize(c) }
                        try db.execute("SAVEPOINT r")
                        do throws(StoreError) {
                            results[i] = .success(try register(request, channels: channels, in: db))
                            try db.execute("RELEASE SAVEPOINT r")
                        } catch {
                            try db.execute("ROLLBACK TO SAVEPOINT r")
                            throw error
                        }
                    } catch {
                        if error.code == .ioError { throw error }
                        results[i] = .failure(error)
                    }
                }
            }
        } catch {
            return requests.map { _ in .failure(error) }
        }
        return results.map { $0 ?? .failure(StoreError(.unknown(0), "registration was not written")) }
    }

    /// Upserts APNs registrations in one statement; nil for a request whose key a device of another service holds.
    func upsertPlain(_ requests: [RegistrationRequest], in db: PostgresSession) throws(StoreError) -> [RegistrationOutcome?] {
        var inserted: [String: Bool] = [:]
        // A given environment replaces the stored one; without one a device keeps its own (new ones: production).
        for given in [true, false] {
            let group = requests.filter { ($0.environment != nil) == given }
            guard !group.isEmpty else { continue }
            let apps = group.map(\.app), tokens = group.map(\.token.hex)
            let environments = group.map { $0.environment?.rawValue ?? APNsEnvironment.production.rawValue }
            // The fields a device gets if this creates it (nothing is replaced here, so no zone change to stamp);
            // a device already stored keeps its own here and gets them from applyInstallationBatch. A group without
            // any leaves the installation columns out (NULL) rather than decode an empty object per row.
            let fields = group.map { r in
                StoredInstallation.forNewDevice(r.installation, replaced: nil, now: 0)?.columns.json().encodedString ?? "{}"
            }
            let given = fields.contains { $0 != "{}" }
            let rows = try db.rows("""
                INSERT INTO devices AS d (app, token, environment, channels, created_ms, last_registered_ms
                    \(unescaped: given ? ", " + Self.installationNames : ""))
                SELECT a, t, e, '', n.ms, n.ms \(unescaped: given ? ", " + Self.installationValues : "")
                FROM unnest(\(apps)::text[], \(tokens)::text[], \(environments)::text[], \(fields)::text[]) AS r (a, t, e, f)
                \(unescaped: given ? "CROSS JOIN LATERAL jsonb_to_record(r.f::jsonb) AS x (\(Self.installationRecord))" : "")
                CROSS JOIN (SELECT coalesce(\(now)::bigint, pp_now_ms()) AS ms) n
                ORDER BY a, t
                ON CONFLICT (app, token) DO UPDATE SET last_registered_ms = excluded.last_registered_ms,
                    environment = CASE WHEN \(given) THEN excluded.environment ELSE d.environment END
                WHERE d.service = 'apns'
                RETURNING d.app, d.token, (xmax = 0)
                """, as: (String, String, Bool).self)
            for (app, token, isNew) in rows { inserted[app + "\u{0}" + token] = isNew }
        }
        return requests.map { r in inserted[r.app + "\u{0}" + r.token.hex].map { $0 ? .created : .updated } }
    }

    struct StoredDevice {
        var id: Int64
        var environment: String
        var channels: [String]
        var lastRegisteredMs: Int64
        var service: String
    }

    func find(app: String, token: DeviceToken, lock: Bool, in db: PostgresSession) throws(StoreError) -> StoredDevice? {
        let hex = token.hex
        let query: PostgresQuery = lock
            ? "SELECT id, environment, channels, last_registered_ms, service FROM devices WHERE app = \(app) AND token = \(hex) FOR UPDATE"
            : "SELECT id, environment, channels, last_registered_ms, service FROM devices WHERE app = \(app) AND token = \(hex)"
        guard let (id, environment, channels, last, service) = try db.row(query, as: (Int64, String, String, Int64, String).self)
        else { return nil }
        return StoredDevice(
            id: id, environment: environment, channels: Channels.decode(channels), lastRegisteredMs: last, service: service)
    }

    func register(_ request: RegistrationRequest, channels given: [String]?, in db: PostgresSession) throws(StoreError) -> RegistrationOutcome {
        let app = request.app
        var replaced: StoredDevice?
        var replacedInstallation: StoredInstallation?
        if let old = request.tokenToReplace, let row = try find(app: app, token: old, lock: true, in: db) {
            try request.checkService(stored: row.service, role: "old token", key: old)
            replacedInstallation = try storedInstallation(id: row.id, in: db)
            try db.query("DELETE FROM devices WHERE id = \(row.id)")
            replaced = row
        }
        let existing = try find(app: app, token: request.token, lock: true, in: db)
        if let existing { try request.checkService(stored: existing.service, role: "token", key: request.token) }
        let (service, subscription) = (request.service.rawValue, request.storedSubscription)
        let (channels, environment) = request.resolved(
            channels: given, existing: existing.map { ($0.environment, $0.channels) },
            replaced: replaced.map { ($0.environment, $0.channels) })
        let id: Int64
        var created = false
        if let existing {
            let encoded = Channels.encode(channels ?? existing.channels)
            try db.query("""
                UPDATE devices SET last_registered_ms = coalesce(\(now)::bigint, pp_now_ms()), environment = \(environment),
                    channels = \(encoded), subscription = coalesce(\(subscription), subscription)
                WHERE id = \(existing.id)
                """)
            id = existing.id
            if let channels, channels != existing.channels { try setChannels(channels, of: id, app: app, token: request.token, in: db) }
        } else {
            let encoded = Channels.encode(channels ?? [])
            let hex = request.token.hex
            // The installation fields ride in the INSERT when it creates the device; a zone carried over from the
            // replaced token and changed is stamped with the store's clock.
            var fields = "{}"
            if StoredInstallation.isWritten(by: request.installation, replaced: replacedInstallation) {
                let nowMs = try replacedInstallation == nil ? 0 : storeNowMs(in: db)
                fields = StoredInstallation.forNewDevice(request.installation, replaced: replacedInstallation, now: nowMs)?
                    .columns.json().encodedString ?? "{}"
            }
            // Another process may insert the same token between our read and this write: the upsert settles it (and
            // the fields are then applied to the stored row below, as for a device that existed).
            guard let (newId, isNew) = try db.row("""
                INSERT INTO devices AS d (app, token, environment, channels, created_ms, last_registered_ms, service, subscription,
                    \(unescaped: Self.installationNames))
                SELECT \(app), \(hex), \(environment), \(encoded), n.ms, n.ms, \(service), \(subscription),
                    \(unescaped: Self.installationValues)
                FROM (SELECT coalesce(\(now)::bigint, pp_now_ms()) AS ms) n
                CROSS JOIN jsonb_to_record(\(fields)::jsonb) AS x (\(unescaped: Self.installationRecord))
                ON CONFLICT (app, token) DO UPDATE SET last_registered_ms = excluded.last_registered_ms,
                    environment = excluded.environment,
                    channels = CASE WHEN \(channels != nil) THEN excluded.channels ELSE d.channels END,
                    subscription = coalesce(excluded.subscription, d.subscription)
                WHERE d.service = excluded.service
                RETURNING id, (xmax = 0)
                """, as: (Int64, Bool).self)
            else {
                // Another process registered the key under another service in between.
                throw StoreError(.constraint, "token \(request.token.masked) is registered under another service: a device belongs to one push service")
            }
            id = newId
            created = isNew
            if let channels, !channels.isEmpty || !isNew { try setChannels(channels, of: id, app: app, token: request.token, in: db) }
        }
        if !created {
            try applyInstallation(request.installation, id: id, replaced: replacedInstallation, in: db)
        }
        return .of(replacing: replaced == nil ? nil : request.oldToken, created: created)
    }

    func setChannels(_ channels: [String], of id: Int64, app: String, token: DeviceToken, in db: PostgresSession) throws(StoreError) {
        let hex = token.hex
        try db.query("DELETE FROM device_channels WHERE device_id = \(id)")
        if channels.isEmpty { return }
        try db.query("""
            INSERT INTO device_channels (app, channel, token, device_id)
            SELECT \(app), c, \(hex), \(id) FROM unnest(\(channels)::text[]) AS c
            """)
    }

    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    @discardableResult
    public func unregister(app: String, token: DeviceToken) throws(StoreError) -> Bool {
        let hex = token.hex
        return try pool.withConnection { (db) throws(StoreError) -> Bool in
            try db.changes("DELETE FROM devices WHERE app = \(app) AND token = \(hex)") > 0
        }
    }
}
