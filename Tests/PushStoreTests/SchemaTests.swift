import Foundation
import PushCore
import Testing

@testable import PushStore

@Suite struct SchemaTests {
    @Test func migratesVersionOneDatabase() throws {
        let path = makeTempDirectory() + "/v1.sqlite"
        do {
            // Version 1 exactly as it shipped, written by hand (not from SQLiteSchema.migrations).
            let db = try Connection(path: path, busyTimeoutMs: 1000, synchronous: "FULL")
            try db.execute("""
                CREATE TABLE schema_version (version INTEGER NOT NULL);
                INSERT INTO schema_version VALUES (1);
                CREATE TABLE devices (app TEXT NOT NULL, token TEXT NOT NULL, id INTEGER NOT NULL UNIQUE,
                    environment TEXT NOT NULL CHECK (environment IN ('development', 'production')),
                    channels TEXT NOT NULL DEFAULT '', created_ms INTEGER NOT NULL,
                    last_registered_ms INTEGER NOT NULL, PRIMARY KEY (app, token)) WITHOUT ROWID;
                CREATE TABLE device_channels (app TEXT NOT NULL, channel TEXT NOT NULL, token TEXT NOT NULL,
                    device_id INTEGER NOT NULL REFERENCES devices(id) ON DELETE CASCADE,
                    PRIMARY KEY (app, channel, token)) WITHOUT ROWID;
                CREATE INDEX device_channels_device ON device_channels (device_id);
                CREATE TABLE prune_log (id INTEGER PRIMARY KEY, app TEXT NOT NULL, token TEXT NOT NULL,
                    reason TEXT NOT NULL, action TEXT NOT NULL CHECK (action IN ('deleted', 'skipped')),
                    apns_timestamp_ms INTEGER, last_registered_ms INTEGER, at_ms INTEGER NOT NULL);
                INSERT INTO devices (id, app, token, environment, channels, created_ms, last_registered_ms)
                    VALUES (1, 'a', '00112233445566778899aabbccddeeff', 'production', 'news', 100, 200);
                INSERT INTO device_channels VALUES ('a', 'news', '00112233445566778899aabbccddeeff', 1);
                """)
        }
        let registry = try SQLiteRegistry(path: path)
        #expect(try registry.schemaVersion() == SQLiteSchema.currentVersion)
        let device = try #require(try registry.list(app: "a").first)
        #expect(device.token.hex == "00112233445566778899aabbccddeeff")
        #expect(device.channels == ["news"] && device.createdMs == 100 && device.lastRegisteredMs == 200)
        #expect(device.lastSuccessMs == nil)
        #expect(try registry.count(app: "a", channel: "news") == 1)
        // Version-2 features work on the migrated file.
        try registry.markSuccess(app: "a", tokens: [device.token], atMs: 300)
        #expect(try registry.list(app: "a").first?.lastSuccessMs == 300)
        #expect(try registry.integrityCheck() == "ok")
        // Opening again is a no-op migration.
        #expect(try SQLiteRegistry(path: path).schemaVersion() == SQLiteSchema.currentVersion)
    }

    /// Migration 19 edits the schema text in place: a database migrated to 18 (the service CHECK on devices, the
    /// delivery log and the webhook outbox) takes an HMS device after it, keeps its rows, and stays intact.
    @Test func versionNineteenDropsTheServiceChecksInPlace() throws {
        let path = makeTempDirectory() + "/v18.sqlite"
        do {
            let db = try Connection(path: path, busyTimeoutMs: 1000, synchronous: "FULL")
            try db.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
            for sql in SQLiteSchema.migrations[..<SQLiteSchema.serviceCheckMigration].joined() { try db.execute(sql) }
            try db.execute("INSERT INTO schema_version VALUES (18)")
            try db.execute("""
                INSERT INTO devices (id, app, token, environment, channels, created_ms, last_registered_ms, service, subscription)
                    VALUES (1, 'a', 'aa', 'production', '', 1, 1, 'fcm', 'tok')
                """)
            // The CHECK is there before: an hms row is refused.
            #expect(throws: StoreError.self) {
                try db.execute("""
                    INSERT INTO devices (id, app, token, environment, channels, created_ms, last_registered_ms, service)
                        VALUES (2, 'a', 'bb', 'production', '', 1, 1, 'hms')
                    """)
            }
        }
        let registry = try SQLiteRegistry(path: path)
        #expect(try registry.schemaVersion() == SQLiteSchema.currentVersion)
        let token = try HMSPushToken(parsing: String(repeating: "IQAAAACy0ht", count: 4))
        #expect(try registry.registerBatch([RegistrationRequest(app: "a", hmsToken: token)]).first?.get() == .created)
        #expect(try registry.device(app: "a", token: DeviceKey.of(token))?.service == .hms)
        #expect(try registry.count(app: "a", channel: nil) == 2)
        #expect(try registry.integrityCheck() == "ok")
    }

    @Test func versionFiveMakesOutcomesThatWereNeverDeliveredRetryable() throws {
        let path = makeTempDirectory() + "/v4.sqlite"
        do {
            // A version-4 file: migrations 1-4 exactly as they shipped, and what the old engine wrote for a
            // broadcast APNs never answered ("notSent"), one whose retries ran out ("failed") and a credentials stop.
            let db = try Connection(path: path, busyTimeoutMs: 1000, synchronous: "FULL")
            try db.execute("CREATE TABLE schema_version (version INTEGER NOT NULL); INSERT INTO schema_version VALUES (4)")
            for sql in SQLiteSchema.migrations[0..<4].joined() { try db.execute(sql) }
            try db.execute("""
                INSERT INTO broadcasts (id, app, state, payload, push_type, priority, total, checkpoint, dispatched,
                    created_ms, updated_ms, finished_ms, explicit_tokens)
                VALUES ('burned', 'a', 'completed', '{}', 'alert', 10, 3, 'cc', 'cc', 1, 1, 1, 0),
                       ('refused', 'a', 'failed', '{}', 'alert', 10, 3, 'cc', 'cc', 1, 1, 1, 0);
                INSERT INTO broadcast_outcomes VALUES ('burned', 'aa', 'notSent', 0, 'cannot connect', 1, 0, 0),
                    ('burned', 'bb', 'failed', 429, 'TooManyRequests', 5, 0, 0),
                    ('burned', 'cc', 'accepted', 200, NULL, 1, 0, 0),
                    ('refused', 'aa', 'credentialFailure', 403, 'BadCertificate', 1, 0, 0);
                INSERT INTO broadcast_leases VALUES ('a', 'burned', 'host:1:x', 0);
                """)
        }
        let registry = try SQLiteRegistry(path: path)
        #expect(try registry.schemaVersion() == SQLiteSchema.currentVersion)
        #expect(try registry.broadcastCounts(id: "burned").deferred == 2)
        #expect(try registry.broadcastCounts(id: "burned").accepted == 1)
        #expect(try registry.broadcast(id: "refused")?.state == .interrupted)
        #expect(try registry.broadcast(id: "refused")?.finishedMs == nil)
        // Version 6 carried both over as one shard with their progress; the burned id's never-delivered devices
        // are the next round's targets.
        let store = registry.deliveryStore
        #expect(try store.shards(id: "burned").map(\.state) == [.done])
        #expect(try store.shards(id: "refused").map(\.state) == [.pending])
        _ = try store.startBroadcast(id: "burned", shardSize: 1000, newRound: true)
        let shard = try #require(try store.claimShard(broadcastId: "burned", apps: nil, owner: "me", ttlMs: 1000, ownerIsDead: { _ in false }))
        #expect(shard.fence == 1 && shard.mainDone && shard.checkpoint == "cc")
        #expect(try store.deferredTargets(id: "burned", beforeRun: shard.run, after: "", through: shard.hi, limit: 10)
            .map(\.target.token.hex) == ["aa", "bb"])
        #expect(try registry.integrityCheck() == "ok")
    }

    @Test func refusesNewerDatabase() throws {
        let path = makeTempDirectory() + "/new.sqlite"
        _ = try SQLiteRegistry(path: path)
        do {
            let db = try Connection(path: path, busyTimeoutMs: 1000, synchronous: "FULL")
            try db.execute("UPDATE schema_version SET version = 99")
        }
        let error = #expect(throws: StoreError.self) { try SQLiteRegistry(path: path) }
        #expect(error?.code == .schemaTooNew)
        #expect(error?.message.contains("99") == true)
    }

    @Test func refusesNonDatabaseFile() throws {
        let path = makeTempDirectory() + "/junk.sqlite"
        _ = FileManager.default.createFile(atPath: path, contents: Data(repeating: 0x41, count: 4096))
        let error = #expect(throws: StoreError.self) { try SQLiteRegistry(path: path) }
        #expect(error?.code == .corrupt)
    }
}
