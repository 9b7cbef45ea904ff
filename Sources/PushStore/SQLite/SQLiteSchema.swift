import PushCore

/// The registry's schema as numbered migrations. Version N is reached by running migrations 1…N in order;
/// the version lives in the one-row `schema_version` table. Never edit a shipped migration: add one.
enum SQLiteSchema {
    /// The version this build writes. A database with a higher version is refused.
    static var currentVersion: Int64 { Int64(migrations.count) }

    /// Migration `i` (0-based) takes the schema from version `i` to `i + 1`.
    static let migrations: [[String]] = [
        // 1: devices, their channels, and the prune log.
        [
            // Clustered on the keyset key (app, token): a broadcast stream is one sequential range scan
            // instead of an index walk plus a random table lookup per row. `id` is the stable handle the
            // channel rows point at (assigned as max(id) + 1; its unique index only ever appends).
            """
            CREATE TABLE devices (
                app TEXT NOT NULL,
                token TEXT NOT NULL,
                id INTEGER NOT NULL UNIQUE,
                environment TEXT NOT NULL CHECK (environment IN ('development', 'production')),
                channels TEXT NOT NULL DEFAULT '',
                created_ms INTEGER NOT NULL,
                last_registered_ms INTEGER NOT NULL,
                PRIMARY KEY (app, token)
            ) WITHOUT ROWID
            """,
            // Channel membership, keyed (app, channel, token) so a channel broadcast is a keyset range
            // scan of this index; `devices.channels` keeps a copy so streaming all devices needs no join.
            """
            CREATE TABLE device_channels (
                app TEXT NOT NULL,
                channel TEXT NOT NULL,
                token TEXT NOT NULL,
                device_id INTEGER NOT NULL REFERENCES devices(id) ON DELETE CASCADE,
                PRIMARY KEY (app, channel, token)
            ) WITHOUT ROWID
            """,
            "CREATE INDEX device_channels_device ON device_channels (device_id)",
            """
            CREATE TABLE prune_log (
                id INTEGER PRIMARY KEY,
                app TEXT NOT NULL,
                token TEXT NOT NULL,
                reason TEXT NOT NULL,
                action TEXT NOT NULL CHECK (action IN ('deleted', 'skipped')),
                apns_timestamp_ms INTEGER,
                last_registered_ms INTEGER,
                at_ms INTEGER NOT NULL
            )
            """,
        ],
        // 2: last-success time per device and the delivery log written by the sender.
        [
            "ALTER TABLE devices ADD COLUMN last_success_ms INTEGER",
            """
            CREATE TABLE delivery_log (
                id INTEGER PRIMARY KEY,
                app TEXT NOT NULL,
                apns_id TEXT NOT NULL,
                unique_id TEXT,
                token TEXT NOT NULL,
                status INTEGER NOT NULL,
                reason TEXT,
                attempts INTEGER NOT NULL,
                possibly_duplicated INTEGER NOT NULL,
                first_attempt_ms INTEGER NOT NULL,
                finished_ms INTEGER NOT NULL
            )
            """,
            "CREATE INDEX delivery_log_app_finished ON delivery_log (app, finished_ms)",
        ],
        // 3: broadcasts — the job record with its checkpoint, one final outcome per token, and a lease
        // per app so overlapping cron runs cannot both send.
        [
            """
            CREATE TABLE broadcasts (
                id TEXT PRIMARY KEY,
                app TEXT NOT NULL,
                state TEXT NOT NULL CHECK (state IN ('pending', 'running', 'interrupted', 'completed', 'failed')),
                payload BLOB NOT NULL,
                push_type TEXT NOT NULL,
                priority INTEGER NOT NULL,
                expiration INTEGER,
                collapse_id TEXT,
                channel TEXT,
                environment TEXT,
                total INTEGER NOT NULL DEFAULT 0,
                checkpoint TEXT NOT NULL DEFAULT '',
                dispatched TEXT NOT NULL DEFAULT '',
                error TEXT,
                created_ms INTEGER NOT NULL,
                updated_ms INTEGER NOT NULL,
                finished_ms INTEGER
            )
            """,
            "CREATE INDEX broadcasts_app_state ON broadcasts (app, state)",
            """
            CREATE TABLE broadcast_outcomes (
                broadcast_id TEXT NOT NULL,
                token TEXT NOT NULL,
                kind TEXT NOT NULL,
                status INTEGER NOT NULL,
                reason TEXT,
                attempts INTEGER NOT NULL,
                pruned INTEGER NOT NULL,
                possibly_duplicated INTEGER NOT NULL,
                PRIMARY KEY (broadcast_id, token)
            ) WITHOUT ROWID
            """,
            """
            CREATE TABLE broadcast_leases (
                app TEXT PRIMARY KEY,
                broadcast_id TEXT NOT NULL,
                owner TEXT NOT NULL,
                expires_ms INTEGER NOT NULL
            )
            """,
        ],
        // 4: broadcasts to an explicit token list (the HTTP API's {"tokens": [...]}), streamed by key
        // like registry broadcasts.
        [
            "ALTER TABLE broadcasts ADD COLUMN explicit_tokens INTEGER NOT NULL DEFAULT 0",
            """
            CREATE TABLE broadcast_tokens (
                broadcast_id TEXT NOT NULL,
                token TEXT NOT NULL,
                PRIMARY KEY (broadcast_id, token)
            ) WITHOUT ROWID
            """,
        ],
        // 5: delivery that never loses a device. Fenced leases (the fence only grows, so a lease row is
        // released, never deleted); run numbers on broadcasts and outcomes (a deferred outcome is retried by a
        // later run); the retry pass's dispatch mark; the pruning breaker's state per app and endpoint.
        // Outcomes older versions wrote as final although nothing was delivered ('failed': retries exhausted,
        // 'notSent' / 'credentialFailure': never sent) become 'deferred', so the same id now retries them
        // instead of being burned; 'failed' broadcasts become resumable.
        [
            "ALTER TABLE broadcast_leases ADD COLUMN fence INTEGER NOT NULL DEFAULT 0",
            "ALTER TABLE broadcasts ADD COLUMN run INTEGER NOT NULL DEFAULT 0",
            "ALTER TABLE broadcasts ADD COLUMN retry_run INTEGER NOT NULL DEFAULT 0",
            "ALTER TABLE broadcasts ADD COLUMN retry_dispatched TEXT NOT NULL DEFAULT ''",
            "ALTER TABLE broadcast_outcomes ADD COLUMN run INTEGER NOT NULL DEFAULT 0",
            "UPDATE broadcast_outcomes SET kind = 'deferred' WHERE kind IN ('failed', 'notSent', 'credentialFailure')",
            "UPDATE broadcasts SET state = 'interrupted', finished_ms = NULL WHERE state = 'failed'",
            """
            CREATE INDEX broadcast_outcomes_deferred ON broadcast_outcomes (broadcast_id, token)
            WHERE kind = 'deferred'
            """,
            """
            CREATE TABLE pruning_breakers (
                app TEXT NOT NULL,
                endpoint TEXT NOT NULL,
                answers INTEGER NOT NULL,
                bad_device_tokens INTEGER NOT NULL,
                consecutive INTEGER NOT NULL,
                tripped INTEGER NOT NULL,
                updated_ms INTEGER NOT NULL,
                PRIMARY KEY (app, endpoint)
            ) WITHOUT ROWID
            """,
        ],
        // 6: broadcasts split into range shards of the token key space, each claimed by one worker at a time
        // under its own fence, with its own checkpoint; the claim log (who held which shard when, and what each
        // claim sent). The per-app lease is gone: several workers share a broadcast. Broadcasts started before
        // are carried over as one shard with their progress; the old progress columns stay, unused.
        [
            """
            CREATE TABLE broadcast_shards (
                broadcast_id TEXT NOT NULL,
                shard INTEGER NOT NULL,
                lo TEXT NOT NULL,
                hi TEXT NOT NULL,
                state TEXT NOT NULL CHECK (state IN ('pending', 'claimed', 'done')),
                owner TEXT NOT NULL DEFAULT '',
                fence INTEGER NOT NULL DEFAULT 0,
                expires_ms INTEGER NOT NULL DEFAULT 0,
                available_ms INTEGER NOT NULL DEFAULT 0,
                run INTEGER NOT NULL DEFAULT 0,
                checkpoint TEXT NOT NULL DEFAULT '',
                dispatched TEXT NOT NULL DEFAULT '',
                main_done INTEGER NOT NULL DEFAULT 0,
                retry_run INTEGER NOT NULL DEFAULT 0,
                retry_dispatched TEXT NOT NULL DEFAULT '',
                PRIMARY KEY (broadcast_id, shard)
            ) WITHOUT ROWID
            """,
            """
            CREATE TABLE broadcast_claims (
                broadcast_id TEXT NOT NULL,
                shard INTEGER NOT NULL,
                fence INTEGER NOT NULL,
                owner TEXT NOT NULL,
                claimed_ms INTEGER NOT NULL,
                ended_ms INTEGER,
                ending TEXT,
                sent INTEGER NOT NULL DEFAULT 0,
                PRIMARY KEY (broadcast_id, shard, fence)
            ) WITHOUT ROWID
            """,
            """
            INSERT INTO broadcast_shards (broadcast_id, shard, lo, hi, state, run, checkpoint, dispatched, main_done,
                retry_run, retry_dispatched)
            SELECT id, 0, '', 'g', CASE WHEN state = 'completed' THEN 'done' ELSE 'pending' END, run, checkpoint,
                dispatched, state = 'completed', retry_run, retry_dispatched
            FROM broadcasts WHERE state <> 'pending'
            """,
            "UPDATE broadcasts SET run = 1 WHERE run > 0",
            "DROP TABLE broadcast_leases",
        ],
        // 7: scheduled and cancelled jobs: `scheduled_ms` (not before), and 'cancelled' among the states. SQLite
        // cannot change a CHECK constraint, so the table is rebuilt (the progress columns version 6 left unused
        // are dropped on the way). Nothing references broadcasts by foreign key.
        [
            """
            CREATE TABLE broadcasts_v7 (
                id TEXT PRIMARY KEY,
                app TEXT NOT NULL,
                state TEXT NOT NULL CHECK (state IN ('pending', 'running', 'interrupted', 'completed', 'failed', 'cancelled')),
                payload BLOB NOT NULL,
                push_type TEXT NOT NULL,
                priority INTEGER NOT NULL,
                expiration INTEGER,
                collapse_id TEXT,
                channel TEXT,
                environment TEXT,
                total INTEGER NOT NULL DEFAULT 0,
                error TEXT,
                created_ms INTEGER NOT NULL,
                updated_ms INTEGER NOT NULL,
                finished_ms INTEGER,
                explicit_tokens INTEGER NOT NULL DEFAULT 0,
                run INTEGER NOT NULL DEFAULT 0,
                scheduled_ms INTEGER
            )
            """,
            """
            INSERT INTO broadcasts_v7 (id, app, state, payload, push_type, priority, expiration, collapse_id, channel,
                environment, total, error, created_ms, updated_ms, finished_ms, explicit_tokens, run)
            SELECT id, app, state, payload, push_type, priority, expiration, collapse_id, channel,
                environment, total, error, created_ms, updated_ms, finished_ms, explicit_tokens, run
            FROM broadcasts
            """,
            "DROP TABLE broadcasts",
            "ALTER TABLE broadcasts_v7 RENAME TO broadcasts",
            "CREATE INDEX broadcasts_app_state ON broadcasts (app, state)",
        ],
        // 8: the webhook outbox: events (pruned tokens, final failures) written in the commit that caused them,
        // deleted once the app's webhook took them.
        [
            """
            CREATE TABLE webhook_events (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                app TEXT NOT NULL,
                kind TEXT NOT NULL,
                token TEXT NOT NULL,
                status INTEGER NOT NULL,
                reason TEXT,
                apns_id TEXT,
                broadcast_id TEXT,
                apns_timestamp_ms INTEGER,
                created_ms INTEGER NOT NULL,
                attempts INTEGER NOT NULL DEFAULT 0,
                due_ms INTEGER NOT NULL DEFAULT 0
            )
            """,
            "CREATE INDEX webhook_events_app_due ON webhook_events (app, due_ms, id)",
        ],
        // 9: delivery and prune counters, kept in the transaction that writes the log rows, so /metrics reads a
        // few rows instead of scanning the logs, and its counters never go down when retention trims the logs.
        // Seeded from the logs as they are. Reasons are stored reduced (APNsReason.label): bounded.
        [
            """
            CREATE TABLE delivery_counters (
                app TEXT NOT NULL,
                status INTEGER NOT NULL,
                reason TEXT NOT NULL,
                count INTEGER NOT NULL,
                retries INTEGER NOT NULL,
                PRIMARY KEY (app, status, reason)
            ) WITHOUT ROWID
            """,
            """
            INSERT INTO delivery_counters (app, status, reason, count, retries)
            SELECT app, status, CASE WHEN status = 0 AND reason IS NOT NULL THEN 'transportError' ELSE coalesce(reason, '') END,
                count(*), sum(max(attempts - 1, 0))
            FROM delivery_log GROUP BY 1, 2, 3
            """,
            """
            CREATE TABLE prune_counters (
                app TEXT NOT NULL,
                reason TEXT NOT NULL,
                action TEXT NOT NULL,
                count INTEGER NOT NULL,
                PRIMARY KEY (app, reason, action)
            ) WITHOUT ROWID
            """,
            "INSERT INTO prune_counters (app, reason, action, count) SELECT app, reason, action, count(*) FROM prune_log GROUP BY 1, 2, 3",
        ],
        // 10: delivery history. Each delivery-log row names its broadcast or send job and its outcome kind (older
        // rows: NULL, read as the kind their status and reason imply). `pushctl deliveries` and
        // `GET /v1/apps/{app}/deliveries` page newest first by (finished_ms, id): per app through
        // delivery_log_app_finished (its entries end with the rowid), per token and per broadcast through the
        // two indexes below. Retention deletes in rowid order and needs no index.
        [
            "ALTER TABLE delivery_log ADD COLUMN broadcast_id TEXT",
            "ALTER TABLE delivery_log ADD COLUMN kind TEXT",
            "CREATE INDEX delivery_log_app_token ON delivery_log (app, token, finished_ms)",
            "CREATE INDEX delivery_log_broadcast ON delivery_log (app, broadcast_id, finished_ms) WHERE broadcast_id IS NOT NULL",
        ],
        // 11: Live Activity tokens (push-to-start per installation and attributes type; update tokens per activity)
        // and the app's iOS 18 broadcast channels. Keyed (app, token) like devices, so a prune finds either kind.
        [
            """
            CREATE TABLE live_activity_tokens (
                app TEXT NOT NULL,
                token TEXT NOT NULL,
                kind TEXT NOT NULL CHECK (kind IN ('start', 'update')),
                environment TEXT NOT NULL CHECK (environment IN ('development', 'production')),
                installation TEXT,
                attributes_type TEXT,
                activity_id TEXT,
                channels TEXT NOT NULL DEFAULT '',
                created_ms INTEGER NOT NULL,
                last_registered_ms INTEGER NOT NULL,
                PRIMARY KEY (app, token)
            ) WITHOUT ROWID
            """,
            "CREATE UNIQUE INDEX live_activity_start ON live_activity_tokens (app, installation, attributes_type) WHERE kind = 'start'",
            "CREATE INDEX live_activity_update ON live_activity_tokens (app, activity_id) WHERE kind = 'update'",
            """
            CREATE TABLE broadcast_channels (
                app TEXT NOT NULL,
                environment TEXT NOT NULL CHECK (environment IN ('development', 'production')),
                channel_id TEXT NOT NULL,
                storage_policy INTEGER NOT NULL,
                label TEXT,
                created_ms INTEGER NOT NULL,
                PRIMARY KEY (app, environment, channel_id)
            ) WITHOUT ROWID
            """,
        ],
        // 12: the lean ledger. A broadcast keeps a row per device only where the device needs action later: dead
        // tokens and rejections (history, the webhook), deferrals and pending devices (the next claim sends them
        // again). An accepted device writes nothing of its own: the broadcast's counts are counters per shard,
        // kind and reason key, written in the commit that moves the checkpoint past accepted devices or writes the
        // other rows. Rows already stored are counted (under shard -1, as they cannot be told apart) and kept, so
        // an unfinished broadcast resumes across the upgrade; retention removes them with the broadcast's history.
        // The retry pass reads deferred and pending rows through one partial index.
        [
            """
            CREATE TABLE broadcast_counts (
                broadcast_id TEXT NOT NULL,
                shard INTEGER NOT NULL,
                kind TEXT NOT NULL,
                reason TEXT NOT NULL,
                devices INTEGER NOT NULL,
                retried INTEGER NOT NULL,
                possibly_duplicated INTEGER NOT NULL,
                pruned INTEGER NOT NULL,
                PRIMARY KEY (broadcast_id, shard, kind, reason)
            ) WITHOUT ROWID
            """,
            """
            INSERT INTO broadcast_counts (broadcast_id, shard, kind, reason, devices, retried, possibly_duplicated, pruned)
            SELECT broadcast_id, -1, kind, CASE WHEN kind = 'accepted' THEN '' ELSE \(BroadcastCounts.reasonKeySQL(kind: "kind", status: "status", reason: "reason")) END,
                count(*), sum(attempts > 1), sum(possibly_duplicated), sum(pruned)
            FROM broadcast_outcomes WHERE kind <> 'pending' GROUP BY 1, 3, 4
            """,
            "DROP INDEX broadcast_outcomes_deferred",
            """
            CREATE INDEX broadcast_outcomes_retry ON broadcast_outcomes (broadcast_id, token)
            WHERE kind IN ('deferred', 'pending')
            """,
        ],
        // 13: a broadcast's rate (`--rate`), honoured by every process working on it: the rate, and the time its
        // next notification may go (ms on the store's clock), which each process moves on as it reserves
        // notifications (see `Pacer`). No row: no rate.
        [
            """
            CREATE TABLE broadcast_rates (
                broadcast_id TEXT PRIMARY KEY,
                per_second REAL NOT NULL CHECK (per_second > 0),
                next_ms REAL NOT NULL DEFAULT 0
            ) WITHOUT ROWID
            """,
        ],
        // 14: installations and audiences. A device's installation fields (NULL: not given): the app's installation
        // id, its user, IANA time zone, BCP 47 locale, app and OS versions with their version-order sort keys
        // (`VersionOrder`: `appVersion >= 2.3` is a text comparison), and tags (a JSON object). `tz_history` holds
        // the zones it had before (`TimeZoneHistory`, written only when the zone changes) and `tz_changed_ms` when
        // it last changed, so every wave of a local-time job agrees which zone a device had at the job's reference
        // instant. A user's devices are one range of `devices_user` (a send to a user is an index lookup, in token
        // order); `devices_installation` finds a device by installation. A job's audience, per-locale payloads and
        // local-time wave are one JSON column (`JobTargeting`). Existing rows get NULLs: nothing is rewritten.
        [
            "ALTER TABLE devices ADD COLUMN installation TEXT",
            "ALTER TABLE devices ADD COLUMN user_id TEXT",
            "ALTER TABLE devices ADD COLUMN time_zone TEXT",
            "ALTER TABLE devices ADD COLUMN locale TEXT",
            "ALTER TABLE devices ADD COLUMN app_version TEXT",
            "ALTER TABLE devices ADD COLUMN app_version_key TEXT",
            "ALTER TABLE devices ADD COLUMN os_version TEXT",
            "ALTER TABLE devices ADD COLUMN os_version_key TEXT",
            "ALTER TABLE devices ADD COLUMN tags TEXT",
            "ALTER TABLE devices ADD COLUMN tz_history TEXT",
            "ALTER TABLE devices ADD COLUMN tz_changed_ms INTEGER",
            "CREATE INDEX devices_user ON devices (app, user_id, token) WHERE user_id IS NOT NULL",
            "CREATE INDEX devices_installation ON devices (app, installation) WHERE installation IS NOT NULL",
            "ALTER TABLE broadcasts ADD COLUMN targeting TEXT",
        ],
        // 15: push services. A device belongs to one (`PushService`): every existing device is 'apns' by the
        // column's default, nothing rewritten (SQLite adds a column with a constant default without touching rows).
        // A Web Push device's key is SHA-256 of its endpoint (`DeviceKey`) and `subscription` holds what its browser's
        // `PushSubscription.toJSON()` gave (endpoint, expirationTime, keys); NULL for other services.
        [
            "ALTER TABLE devices ADD COLUMN service TEXT NOT NULL DEFAULT 'apns' CHECK (service IN ('apns', 'webpush', 'fcm'))",
            "ALTER TABLE devices ADD COLUMN subscription TEXT",
        ],
        // 16: the push service on the delivery history and the webhook outbox, so both say which service answered.
        // Rows written before it read back as 'apns' by the column's default (every device was APNs then).
        [
            "ALTER TABLE delivery_log ADD COLUMN service TEXT NOT NULL DEFAULT 'apns' CHECK (service IN ('apns', 'webpush', 'fcm'))",
            "ALTER TABLE webhook_events ADD COLUMN service TEXT NOT NULL DEFAULT 'apns' CHECK (service IN ('apns', 'webpush', 'fcm'))",
        ],
        // 17: every Web Push device under the key of its endpoint's canonical form, duplicates merged
        // (``EndpointRekeying``; written in Swift by ``rekeyWebPushDevices(_:)``, no SQL of its own).
        [],
        // 18: the delivery and prune counters by push service, so /metrics labels each series with the service that
        // answered. SQLite cannot change a primary key: both tables are rebuilt. What they counted before keeps
        // service '' (unknown: the delivery log need not hold every row a counter counted, so it cannot be split);
        // /metrics shows those rows without a `service` label, the series dashboards already had, frozen. No CHECK on
        // the service, so a service added later needs no rebuild.
        [
            "ALTER TABLE delivery_counters RENAME TO delivery_counters_17",
            """
            CREATE TABLE delivery_counters (
                app TEXT NOT NULL,
                service TEXT NOT NULL,
                status INTEGER NOT NULL,
                reason TEXT NOT NULL,
                count INTEGER NOT NULL,
                retries INTEGER NOT NULL,
                PRIMARY KEY (app, service, status, reason)
            ) WITHOUT ROWID
            """,
            "INSERT INTO delivery_counters SELECT app, '', status, reason, count, retries FROM delivery_counters_17",
            "DROP TABLE delivery_counters_17",
            "ALTER TABLE prune_counters RENAME TO prune_counters_17",
            """
            CREATE TABLE prune_counters (
                app TEXT NOT NULL,
                service TEXT NOT NULL,
                reason TEXT NOT NULL,
                action TEXT NOT NULL,
                count INTEGER NOT NULL,
                PRIMARY KEY (app, service, reason, action)
            ) WITHOUT ROWID
            """,
            "INSERT INTO prune_counters SELECT app, '', reason, action, count FROM prune_counters_17",
            "DROP TABLE prune_counters_17",
        ],
        // 19: no CHECK on the push service of devices, the delivery log and the webhook outbox, so Huawei Push Kit
        // (`hms`) and every service after it needs no table rebuild (the code's `PushService` is the one list; a row of
        // a service this build does not know is never written by it). Written in Swift by ``dropServiceChecks(_:)``:
        // SQLite cannot drop a constraint, and removing a CHECK changes nothing on disk, so the tables' schema text is
        // edited in place — the procedure SQLite documents for it (sqlite.org/lang_altertable.html, "Making Other
        // Kinds Of Table Schema Changes") — instead of rewriting every device row.
        [],
    ]

    /// The migration (0-based index) after whose SQL ``dropServiceChecks(_:)`` runs.
    static let serviceCheckMigration = 18

    /// The constraint migrations 15 and 16 put on each `service` column, exactly as SQLite keeps it in the schema.
    static let serviceCheck = " CHECK (service IN ('apns', 'webpush', 'fcm'))"

    /// Removes ``serviceCheck`` from the schema text of `devices`, `delivery_log` and `webhook_events` inside the
    /// migration's transaction (writable_schema, the schema version bumped so every connection reloads it), and
    /// refuses to go on if any of the three still has it.
    static func dropServiceChecks(_ db: Connection) throws(StoreError) {
        let tables = "('devices', 'delivery_log', 'webhook_events')"
        let read = try db.statement("PRAGMA schema_version")
        let version = try read.step() ? (read.optionalInt64(0) ?? 0) : 0
        read.reset()
        let quoted = String(serviceCheck.flatMap { $0 == "'" ? "''" : String($0) })
        try db.execute("PRAGMA writable_schema = ON")
        try db.execute("UPDATE sqlite_schema SET sql = replace(sql, '\(quoted)', '') WHERE type = 'table' AND name IN \(tables)")
        try db.execute("PRAGMA schema_version = \(version + 1)")
        try db.execute("PRAGMA writable_schema = OFF")
        let check = try db.statement(
            "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name IN \(tables) AND instr(sql, 'CHECK (service IN') > 0")
        let left = try check.step() ? (check.optionalInt64(0) ?? 0) : 0
        check.reset()
        guard left == 0 else {
            throw StoreError(.corrupt, "migration 19: \(left) tables still constrain their push service; the schema is not the one this build wrote")
        }
    }

    /// The migration (0-based index) after whose SQL ``rekeyWebPushDevices(_:)`` runs.
    static let rekeyingMigration = 16

    /// Brings the database to ``currentVersion`` in one write transaction, so two processes opening a new
    /// file at once cannot both migrate. Throws `.schemaTooNew` for a database from a newer build.
    static func migrate(_ db: Connection, path: String) throws(StoreError) {
        try db.transaction(write: true) { () throws(StoreError) in
            try db.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
            let read = try db.statement("SELECT max(version) FROM schema_version")
            let version = try read.step() ? (read.optionalInt64(0) ?? 0) : 0
            read.reset()
            if version > currentVersion {
                throw StoreError(
                    .schemaTooNew,
                    "database \(path) has schema version \(version), newer than this build's \(currentVersion); "
                        + "upgrade PushProvider or use another database file")
            }
            guard version < currentVersion else { return }
            for index in Int(version)..<migrations.count {
                for sql in migrations[index] { try db.execute(sql) }
                if index == rekeyingMigration { try rekeyWebPushDevices(db) }
                if index == serviceCheckMigration { try dropServiceChecks(db) }
            }
            try db.execute("DELETE FROM schema_version")
            let write = try db.statement("INSERT INTO schema_version (version) VALUES (?1)")
            try write.bind(1, currentVersion)
            try write.run()
        }
    }

    /// Applies ``EndpointRekeying``'s plan inside the migration's transaction.
    static func rekeyWebPushDevices(_ db: Connection) throws(StoreError) {
        let select = try db.statement(
            "SELECT id, app, token, subscription, last_registered_ms FROM devices WHERE service = 'webpush'")
        var rows: [EndpointRekeying.Row] = []
        while try select.step() {
            rows.append(EndpointRekeying.Row(
                id: select.int64(0), app: select.text(1), token: select.text(2), subscription: select.optionalText(3),
                lastRegisteredMs: select.int64(4)))
        }
        select.reset()
        let plan = EndpointRekeying.plan(rows)
        let delete = try db.statement("DELETE FROM devices WHERE id = ?1")  // channel rows go by ON DELETE CASCADE
        for id in plan.deletes {
            try delete.bind(1, id)
            try delete.run()
        }
        let update = try db.statement("UPDATE devices SET token = ?2, subscription = ?3 WHERE id = ?1")
        let channels = try db.statement("UPDATE device_channels SET token = ?2 WHERE device_id = ?1")
        for u in plan.updates {
            try update.bind(1, u.id)
            try update.bind(2, u.token)
            try update.bind(3, u.subscription)
            try update.run()
            try channels.bind(1, u.id)
            try channels.bind(2, u.token)
            try channels.run()
        }
    }
}
