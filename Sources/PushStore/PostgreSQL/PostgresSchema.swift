import PostgresNIO
import PushCore

/// The PostgreSQL registry's schema as numbered migrations, like ``Schema`` for SQLite (same tables and
/// meaning; tokens sort bytewise with `COLLATE "C"` so keyset pages match SQLite's order). Version N is
/// reached by running migrations 1…N in order, in one transaction under an advisory lock, so several
/// processes starting at once on a new database migrate it exactly once. Never edit a shipped migration.
enum PostgresSchema {
    /// The version this build writes. A database with a higher version is refused.
    static var currentVersion: Int64 { Int64(migrations.count) }

    /// The advisory lock key migrations hold (`'PushProvider'` as a number).
    static let lockKey: Int64 = 0x5075_7368_5072_6f76

    /// Migration `i` (0-based) takes the schema from version `i` to `i + 1`.
    static let migrations: [[String]] = [
        // 1: everything SQLite's schema 5 holds.
        [
            // The database's clock in ms since 1970: lease expiry and every stored time, so hosts with
            // different clocks agree.
            """
            CREATE FUNCTION pp_now_ms() RETURNS bigint LANGUAGE sql VOLATILE
            AS $$ SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint $$
            """,
            """
            CREATE TABLE devices (
                app text NOT NULL,
                token text COLLATE "C" NOT NULL,
                id bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
                environment text NOT NULL CHECK (environment IN ('development', 'production')),
                channels text NOT NULL DEFAULT '',
                created_ms bigint NOT NULL,
                last_registered_ms bigint NOT NULL,
                last_success_ms bigint,
                PRIMARY KEY (app, token)
            ) WITH (fillfactor = 85)
            """,
            """
            CREATE TABLE device_channels (
                app text NOT NULL,
                channel text NOT NULL,
                token text COLLATE "C" NOT NULL,
                device_id bigint NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
                PRIMARY KEY (app, channel, token)
            )
            """,
            "CREATE INDEX device_channels_device ON device_channels (device_id)",
            """
            CREATE TABLE prune_log (
                id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                app text NOT NULL,
                token text NOT NULL,
                reason text NOT NULL,
                action text NOT NULL CHECK (action IN ('deleted', 'skipped')),
                apns_timestamp_ms bigint,
                last_registered_ms bigint,
                at_ms bigint NOT NULL
            )
            """,
            """
            CREATE TABLE delivery_log (
                id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                app text NOT NULL,
                apns_id text NOT NULL,
                unique_id text,
                token text NOT NULL,
                status integer NOT NULL,
                reason text,
                attempts integer NOT NULL,
                possibly_duplicated boolean NOT NULL,
                first_attempt_ms bigint NOT NULL,
                finished_ms bigint NOT NULL
            )
            """,
            "CREATE INDEX delivery_log_app_finished ON delivery_log (app, finished_ms)",
            """
            CREATE TABLE broadcasts (
                id text PRIMARY KEY,
                app text NOT NULL,
                state text NOT NULL CHECK (state IN ('pending', 'running', 'interrupted', 'completed', 'failed')),
                payload bytea NOT NULL,
                push_type text NOT NULL,
                priority integer NOT NULL,
                expiration bigint,
                collapse_id text,
                channel text,
                environment text,
                explicit_tokens boolean NOT NULL DEFAULT false,
                total bigint NOT NULL DEFAULT 0,
                checkpoint text COLLATE "C" NOT NULL DEFAULT '',
                dispatched text COLLATE "C" NOT NULL DEFAULT '',
                run integer NOT NULL DEFAULT 0,
                retry_run integer NOT NULL DEFAULT 0,
                retry_dispatched text COLLATE "C" NOT NULL DEFAULT '',
                error text,
                created_ms bigint NOT NULL,
                updated_ms bigint NOT NULL,
                finished_ms bigint
            )
            """,
            "CREATE INDEX broadcasts_app_state ON broadcasts (app, state)",
            """
            CREATE TABLE broadcast_outcomes (
                broadcast_id text NOT NULL,
                token text COLLATE "C" NOT NULL,
                kind text NOT NULL,
                status integer NOT NULL,
                reason text,
                attempts integer NOT NULL,
                pruned boolean NOT NULL,
                possibly_duplicated boolean NOT NULL,
                run integer NOT NULL,
                PRIMARY KEY (broadcast_id, token)
            )
            """,
            "CREATE INDEX broadcast_outcomes_deferred ON broadcast_outcomes (broadcast_id, token) WHERE kind = 'deferred'",
            """
            CREATE TABLE broadcast_tokens (
                broadcast_id text NOT NULL,
                token text COLLATE "C" NOT NULL,
                PRIMARY KEY (broadcast_id, token)
            )
            """,
            // One row per app, released (owner '') but never deleted, so its fence only grows.
            """
            CREATE TABLE broadcast_leases (
                app text PRIMARY KEY,
                broadcast_id text NOT NULL,
                owner text NOT NULL,
                expires_ms bigint NOT NULL,
                fence bigint NOT NULL
            )
            """,
            """
            CREATE TABLE pruning_breakers (
                app text NOT NULL,
                endpoint text NOT NULL,
                answers bigint NOT NULL,
                bad_device_tokens bigint NOT NULL,
                consecutive bigint NOT NULL,
                tripped boolean NOT NULL,
                updated_ms bigint NOT NULL,
                PRIMARY KEY (app, endpoint)
            )
            """,
        ],
        // 2: broadcasts split into range shards of the token key space, each claimed by one worker at a time
        // under its own fence (claims with FOR UPDATE SKIP LOCKED), with its own checkpoint; the claim log
        // (who held which shard when, and what each claim sent). The per-app lease is gone: several workers
        // share a broadcast. Broadcasts started before are carried over as one shard with their progress.
        [
            """
            CREATE TABLE broadcast_shards (
                broadcast_id text NOT NULL REFERENCES broadcasts (id) ON DELETE CASCADE,
                shard integer NOT NULL,
                lo text COLLATE "C" NOT NULL,
                hi text COLLATE "C" NOT NULL,
                state text NOT NULL CHECK (state IN ('pending', 'claimed', 'done')),
                owner text NOT NULL DEFAULT '',
                fence bigint NOT NULL DEFAULT 0,
                expires_ms bigint NOT NULL DEFAULT 0,
                available_ms bigint NOT NULL DEFAULT 0,
                run integer NOT NULL DEFAULT 0,
                checkpoint text COLLATE "C" NOT NULL DEFAULT '',
                dispatched text COLLATE "C" NOT NULL DEFAULT '',
                main_done boolean NOT NULL DEFAULT false,
                retry_run integer NOT NULL DEFAULT 0,
                retry_dispatched text COLLATE "C" NOT NULL DEFAULT '',
                PRIMARY KEY (broadcast_id, shard)
            ) WITH (fillfactor = 70)
            """,
            "CREATE INDEX broadcast_shards_open ON broadcast_shards (broadcast_id, shard) WHERE state <> 'done'",
            """
            CREATE TABLE broadcast_claims (
                broadcast_id text NOT NULL REFERENCES broadcasts (id) ON DELETE CASCADE,
                shard integer NOT NULL,
                fence bigint NOT NULL,
                owner text NOT NULL,
                claimed_ms bigint NOT NULL,
                ended_ms bigint,
                ending text,
                sent bigint NOT NULL DEFAULT 0,
                PRIMARY KEY (broadcast_id, shard, fence)
            )
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
            "ALTER TABLE broadcasts DROP COLUMN checkpoint, DROP COLUMN dispatched, DROP COLUMN retry_run, DROP COLUMN retry_dispatched",
        ],
        // 3: the delivery log is append-only in time order: a BRIN index on finish time (what retention needs)
        // costs almost nothing per row, where the B-tree on (app, finish time) cost an index entry and its WAL
        // on every delivery. No query filters the log by app and time.
        [
            "DROP INDEX delivery_log_app_finished",
            "CREATE INDEX delivery_log_finished ON delivery_log USING brin (finished_ms)",
        ],
        // 4: scheduled and cancelled jobs: `scheduled_ms` (not before), and 'cancelled' among the states.
        [
            "ALTER TABLE broadcasts ADD COLUMN scheduled_ms bigint",
            "ALTER TABLE broadcasts DROP CONSTRAINT broadcasts_state_check",
            """
            ALTER TABLE broadcasts ADD CONSTRAINT broadcasts_state_check
                CHECK (state IN ('pending', 'running', 'interrupted', 'completed', 'failed', 'cancelled'))
            """,
        ],
        // 5: the webhook outbox (see the SQLite schema's version 8).
        [
            """
            CREATE TABLE webhook_events (
                id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                app text NOT NULL,
                kind text NOT NULL,
                token text NOT NULL,
                status integer NOT NULL,
                reason text,
                apns_id text,
                broadcast_id text,
                apns_timestamp_ms bigint,
                created_ms bigint NOT NULL,
                attempts integer NOT NULL DEFAULT 0,
                due_ms bigint NOT NULL DEFAULT 0
            )
            """,
            "CREATE INDEX webhook_events_app_due ON webhook_events (app, due_ms, id)",
        ],
        // 6: delivery and prune counters (see the SQLite schema's version 9). Each process adds to one of 16
        // buckets, so concurrent workers rarely wait on the same row; readers sum the buckets.
        [
            """
            CREATE TABLE delivery_counters (
                app text NOT NULL,
                status integer NOT NULL,
                reason text NOT NULL,
                bucket smallint NOT NULL,
                count bigint NOT NULL,
                retries bigint NOT NULL,
                PRIMARY KEY (app, status, reason, bucket)
            )
            """,
            """
            INSERT INTO delivery_counters (app, status, reason, bucket, count, retries)
            SELECT app, status, CASE WHEN status = 0 AND reason IS NOT NULL THEN 'transportError' ELSE coalesce(reason, '') END,
                0, count(*), sum(greatest(attempts - 1, 0))
            FROM delivery_log GROUP BY 1, 2, 3
            """,
            """
            CREATE TABLE prune_counters (
                app text NOT NULL,
                reason text NOT NULL,
                action text NOT NULL,
                bucket smallint NOT NULL,
                count bigint NOT NULL,
                PRIMARY KEY (app, reason, action, bucket)
            )
            """,
            "INSERT INTO prune_counters (app, reason, action, bucket, count) SELECT app, reason, action, 0, count(*) FROM prune_log GROUP BY 1, 2, 3",
        ],
        // 7: delivery history (SQLite's 10). Each delivery-log row names its broadcast or send job and its
        // outcome kind (older rows: NULL, read as the kind their status and reason imply). The history pages
        // newest first by (finished_ms, id) per app, per token or per broadcast: each has a B-tree (three index
        // entries per delivery, the price of the query). Retention deletes in id order through the primary key.
        [
            "ALTER TABLE delivery_log ADD COLUMN broadcast_id text, ADD COLUMN kind text",
            "CREATE INDEX delivery_log_app_finished_id ON delivery_log (app, finished_ms, id)",
            "CREATE INDEX delivery_log_app_token ON delivery_log (app, token, finished_ms, id)",
            "CREATE INDEX delivery_log_broadcast ON delivery_log (app, broadcast_id, finished_ms, id) WHERE broadcast_id IS NOT NULL",
        ],
        // 8: Live Activity tokens and broadcast channels (SQLite's 11).
        [
            """
            CREATE TABLE live_activity_tokens (
                app text NOT NULL,
                token text COLLATE "C" NOT NULL,
                kind text NOT NULL CHECK (kind IN ('start', 'update')),
                environment text NOT NULL CHECK (environment IN ('development', 'production')),
                installation text,
                attributes_type text,
                activity_id text,
                channels text NOT NULL DEFAULT '',
                created_ms bigint NOT NULL,
                last_registered_ms bigint NOT NULL,
                PRIMARY KEY (app, token)
            )
            """,
            "CREATE UNIQUE INDEX live_activity_start ON live_activity_tokens (app, installation, attributes_type) WHERE kind = 'start'",
            "CREATE INDEX live_activity_update ON live_activity_tokens (app, activity_id) WHERE kind = 'update'",
            """
            CREATE TABLE broadcast_channels (
                app text NOT NULL,
                environment text NOT NULL CHECK (environment IN ('development', 'production')),
                channel_id text NOT NULL,
                storage_policy integer NOT NULL,
                label text,
                created_ms bigint NOT NULL,
                PRIMARY KEY (app, environment, channel_id)
            )
            """,
        ],
        // 9: the lean ledger (SQLite's 12): counters per shard, kind and reason key instead of a row per accepted
        // device; rows already stored are counted under shard -1 and kept (an unfinished broadcast resumes across
        // the upgrade); the retry pass reads deferred and pending rows through one partial index.
        [
            """
            CREATE TABLE broadcast_counts (
                broadcast_id text NOT NULL,
                shard integer NOT NULL,
                kind text NOT NULL,
                reason text NOT NULL,
                devices bigint NOT NULL,
                retried bigint NOT NULL,
                possibly_duplicated bigint NOT NULL,
                pruned bigint NOT NULL,
                PRIMARY KEY (broadcast_id, shard, kind, reason)
            ) WITH (fillfactor = 70)
            """,
            """
            INSERT INTO broadcast_counts (broadcast_id, shard, kind, reason, devices, retried, possibly_duplicated, pruned)
            SELECT broadcast_id, -1, kind, CASE WHEN kind = 'accepted' THEN '' ELSE \(BroadcastCounts.reasonKeySQL(kind: "kind", status: "status", reason: "reason")) END,
                count(*), count(*) FILTER (WHERE attempts > 1), count(*) FILTER (WHERE possibly_duplicated),
                count(*) FILTER (WHERE pruned)
            FROM broadcast_outcomes WHERE kind <> 'pending' GROUP BY 1, 3, 4
            """,
            "DROP INDEX broadcast_outcomes_deferred",
            "CREATE INDEX broadcast_outcomes_retry ON broadcast_outcomes (broadcast_id, token) WHERE kind IN ('deferred', 'pending')",
        ],
        // 10: a broadcast's rate (SQLite's 13).
        [
            """
            CREATE TABLE broadcast_rates (
                broadcast_id text PRIMARY KEY,
                per_second double precision NOT NULL CHECK (per_second > 0),
                next_ms double precision NOT NULL DEFAULT 0
            )
            """,
        ],
        // 11: installations and audiences (SQLite's 14). Version keys and the user index are in "C" collation,
        // so `>=` and keyset order are byte order, as on SQLite.
        [
            """
            ALTER TABLE devices
                ADD COLUMN installation text,
                ADD COLUMN user_id text COLLATE "C",
                ADD COLUMN time_zone text COLLATE "C",
                ADD COLUMN locale text COLLATE "C",
                ADD COLUMN app_version text,
                ADD COLUMN app_version_key text COLLATE "C",
                ADD COLUMN os_version text,
                ADD COLUMN os_version_key text COLLATE "C",
                ADD COLUMN tags jsonb,
                ADD COLUMN tz_history jsonb,
                ADD COLUMN tz_changed_ms bigint
            """,
            "CREATE INDEX devices_user ON devices (app, user_id, token) WHERE user_id IS NOT NULL",
            "CREATE INDEX devices_installation ON devices (app, installation) WHERE installation IS NOT NULL",
            "ALTER TABLE broadcasts ADD COLUMN targeting text",
        ],
        // 12: push services (SQLite's 15): every existing device is 'apns' by the column's default (a constant
        // default: no table rewrite); a Web Push device's subscription JSON beside its key.
        [
            """
            ALTER TABLE devices
                ADD COLUMN service text NOT NULL DEFAULT 'apns' CHECK (service IN ('apns', 'webpush', 'fcm')),
                ADD COLUMN subscription text
            """,
        ],
        // 13: the push service on the delivery history and the webhook outbox (SQLite's 16). Rows written before it
        // read back as 'apns' by the column's default (a constant default: no table rewrite).
        [
            "ALTER TABLE delivery_log ADD COLUMN service text NOT NULL DEFAULT 'apns' CHECK (service IN ('apns', 'webpush', 'fcm'))",
            "ALTER TABLE webhook_events ADD COLUMN service text NOT NULL DEFAULT 'apns' CHECK (service IN ('apns', 'webpush', 'fcm'))",
        ],
        // 14: every Web Push device under the key of its endpoint's canonical form, duplicates merged (SQLite's 17;
        // ``EndpointRekeying``, written in Swift by ``rekeyWebPushDevices(_:)``, no SQL of its own).
        [],
        // 15: the delivery and prune counters by push service (SQLite's 18). What they counted before keeps service ''
        // (unknown; /metrics shows it without a `service` label). The column's constant default rewrites no row;
        // the primary key is rebuilt to include it. No CHECK: a service added later needs no migration here.
        [
            """
            ALTER TABLE delivery_counters ADD COLUMN service text NOT NULL DEFAULT '',
                DROP CONSTRAINT delivery_counters_pkey, ADD PRIMARY KEY (app, service, status, reason, bucket)
            """,
            "ALTER TABLE delivery_counters ALTER COLUMN service DROP DEFAULT",
            """
            ALTER TABLE prune_counters ADD COLUMN service text NOT NULL DEFAULT '',
                DROP CONSTRAINT prune_counters_pkey, ADD PRIMARY KEY (app, service, reason, action, bucket)
            """,
            "ALTER TABLE prune_counters ALTER COLUMN service DROP DEFAULT",
        ],
        // 16: no CHECK on the push service of devices, the delivery log and the webhook outbox (SQLite's 19), so
        // Huawei Push Kit (`hms`) and every service after it needs no migration; the code's `PushService` is the one list.
        [
            "ALTER TABLE devices DROP CONSTRAINT IF EXISTS devices_service_check",
            "ALTER TABLE delivery_log DROP CONSTRAINT IF EXISTS delivery_log_service_check",
            "ALTER TABLE webhook_events DROP CONSTRAINT IF EXISTS webhook_events_service_check",
        ],
    ]

    /// The migration (0-based index) after whose SQL ``rekeyWebPushDevices(_:)`` runs.
    static let rekeyingMigration = 13

    /// Brings the database to ``currentVersion``. Throws `.schemaTooNew` for a database from a newer build.
    static func migrate(_ pool: PostgresPool) throws(StoreError) {
        try pool.transaction { (db) throws(StoreError) in
            try db.query("SELECT pg_advisory_xact_lock(\(lockKey))")
            try db.execute("CREATE TABLE IF NOT EXISTS schema_version (version bigint NOT NULL)")
            let stored: Int64? = try db.row("SELECT coalesce(max(version), 0)::bigint FROM schema_version", as: (Int64).self)
            let version = stored ?? 0
            if version > currentVersion {
                throw StoreError(
                    .schemaTooNew,
                    "database \(pool.url) has schema version \(version), newer than this build's \(currentVersion); "
                        + "upgrade PushProvider or use another database")
            }
            guard version < currentVersion else { return }
            for index in Int(version)..<migrations.count {
                for sql in migrations[index] { try db.execute(sql) }
                if index == rekeyingMigration { try rekeyWebPushDevices(db) }
            }
            try db.execute("DELETE FROM schema_version")
            try db.query("INSERT INTO schema_version (version) VALUES (\(currentVersion))")
        }
    }

    /// Applies ``EndpointRekeying``'s plan inside the migration's transaction.
    static func rekeyWebPushDevices(_ db: PostgresSession) throws(StoreError) {
        let rows = try db.rows(
            "SELECT id, app, token, subscription, last_registered_ms FROM devices WHERE service = 'webpush'",
            as: (Int64, String, String, String?, Int64).self
        ).map { EndpointRekeying.Row(id: $0.0, app: $0.1, token: $0.2, subscription: $0.3, lastRegisteredMs: $0.4) }
        let plan = EndpointRekeying.plan(rows)
        for id in plan.deletes {
            try db.query("DELETE FROM devices WHERE id = \(id)")  // channel rows go by ON DELETE CASCADE
        }
        for u in plan.updates {
            try db.query("UPDATE devices SET token = \(u.token), subscription = \(u.subscription) WHERE id = \(u.id)")
            try db.query("UPDATE device_channels SET token = \(u.token) WHERE device_id = \(u.id)")
        }
    }
}
