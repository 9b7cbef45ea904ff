import Foundation
import TestSupport
import PushCore
import Testing

@testable import PushStore

/// The registry backends the conformance suites run on: the same test, the same assertions, on SQLite and on
/// a real PostgreSQL server (``PostgresTestServer``).
enum Backend: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqlite
    case postgres

    var testDescription: String { rawValue }

    /// A new empty registry on this backend, on `clock` when given (the database's or system clock otherwise).
    func open(clock: ManualClock? = nil) throws -> any RegistryStore {
        switch self {
        case .sqlite:
            return try SQLiteRegistry(path: makeTempDirectory() + "/registry.sqlite", nowMs: clock?.function ?? SQLiteRegistry.systemNowMs)
        case .postgres:
            let url = try PostgresTestServer.shared().makeDatabase()
            return try PostgresRegistry(url: PostgresURL(parsing: url), password: nil, connections: 3, nowMs: clock?.function)
        }
    }

    /// The schema version this build's migrations reach on this backend.
    var currentSchemaVersion: Int64 {
        switch self {
        case .sqlite: SQLiteSchema.currentVersion
        case .postgres: PostgresSchema.currentVersion
        }
    }

    /// SQL that puts the counters back in the shape they had before they knew services (SQLite 17, PostgreSQL 14),
    /// for tests that set an older schema version: every later migration must find what its version left.
    var countersWithoutServices: String {
        switch self {
        case .sqlite:
            """
            CREATE TABLE dc (app TEXT NOT NULL, status INTEGER NOT NULL, reason TEXT NOT NULL, count INTEGER NOT NULL,
                retries INTEGER NOT NULL, PRIMARY KEY (app, status, reason)) WITHOUT ROWID;
            INSERT INTO dc SELECT app, status, reason, sum(count), sum(retries) FROM delivery_counters GROUP BY 1, 2, 3;
            DROP TABLE delivery_counters;
            ALTER TABLE dc RENAME TO delivery_counters;
            CREATE TABLE pc (app TEXT NOT NULL, reason TEXT NOT NULL, action TEXT NOT NULL, count INTEGER NOT NULL,
                PRIMARY KEY (app, reason, action)) WITHOUT ROWID;
            INSERT INTO pc SELECT app, reason, action, sum(count) FROM prune_counters GROUP BY 1, 2, 3;
            DROP TABLE prune_counters;
            ALTER TABLE pc RENAME TO prune_counters
            """
        case .postgres:
            """
            CREATE TABLE dc AS SELECT app, status, reason, bucket, sum(count)::bigint AS count, sum(retries)::bigint AS retries
                FROM delivery_counters GROUP BY 1, 2, 3, 4;
            DROP TABLE delivery_counters;
            ALTER TABLE dc RENAME TO delivery_counters;
            ALTER TABLE delivery_counters ADD PRIMARY KEY (app, status, reason, bucket);
            CREATE TABLE pc AS SELECT app, reason, action, bucket, sum(count)::bigint AS count FROM prune_counters GROUP BY 1, 2, 3, 4;
            DROP TABLE prune_counters;
            ALTER TABLE pc RENAME TO prune_counters;
            ALTER TABLE prune_counters ADD PRIMARY KEY (app, reason, action, bucket)
            """
        }
    }

    /// The schema version before the counters knew services (SQLite 17, PostgreSQL 14: their migration is 18 / 15).
    var versionBeforeCounterServices: Int64 {
        switch self {
        case .sqlite: 17
        case .postgres: 14
        }
    }

    /// A second handle on the same database, as another process would open it.
    func reopen(_ registry: any RegistryStore) throws -> any RegistryStore {
        switch self {
        case .sqlite: return try SQLiteRegistry(path: registry.location)
        case .postgres: return try PostgresRegistry(url: PostgresURL(parsing: registry.location), password: nil, connections: 1)
        }
    }
}

/// The protocol's requirements with the defaults the concrete types have.
extension RegistryStore {
    @discardableResult
    func add(
        app: String, token: DeviceToken, oldToken: DeviceToken? = nil, channels: [String]? = nil,
        environment: APNsEnvironment? = nil
    ) throws(StoreError) -> RegistrationOutcome {
        try register(app: app, token: token, oldToken: oldToken, channels: channels, environment: environment)
    }

    func devices(_ app: String, channel: String? = nil, environment: APNsEnvironment? = nil) throws(StoreError) -> Int {
        try count(app: app, channel: channel, environment: environment)
    }
}
