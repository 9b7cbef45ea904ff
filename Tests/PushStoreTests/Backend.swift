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
