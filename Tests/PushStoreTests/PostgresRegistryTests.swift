import Foundation
import TestSupport
import PushCore
import Testing

@testable import PushStore

/// PostgreSQL-only behaviour: the URL (never a password), reaching the server, and what the engine sees when
/// the database is down. The shared contract is in the conformance suites.
@Suite struct PostgresRegistryTests {
    @Test func aURLNamesUserHostPortAndDatabaseAndNeverAPassword() throws {
        let url = try PostgresURL(parsing: "postgres://push@db.internal:6432/registry?sslmode=require")
        #expect(url.user == "push" && url.host == "db.internal" && url.port == 6432 && url.database == "registry" && url.requireTLS)
        #expect(try PostgresURL(parsing: "postgresql://push@[::1]/r").host == "::1")
        #expect(try PostgresURL(parsing: "postgresql://push@[::1]/r").port == 5432)
        for bad in ["postgres://push:secret@db/registry", "postgres://db/registry", "postgres://push@db", "mysql://push@db/r",
                    "postgres://push@db:99999/r", "postgres://push@db/r?sslmode=allow", "postgres://push@db/r?password=x"] {
            #expect { _ = try PostgresURL(parsing: bad) } throws: { error in
                guard let e = error as? StoreError, e.code == .invalidInput else { return false }
                return !e.message.contains("secret")
            }
        }
    }

    @Test func theConfigurationRefusesAPasswordInTheURLAndTakesItFromAFileOrTheEnvironment() throws {
        func config(_ extra: String) throws(ConfigurationError) -> PushConfiguration {
            try PushConfiguration(json: Array("{\(extra)}".utf8), baseDirectory: "/etc/push", zones: .foundation())
        }
        #expect(throws: ConfigurationError.self) { try config(#""database": "postgres://push:secret@db/r""#) }
        let fromFile = try config(#""database": "postgres://push@db/r", "databasePasswordFile": "db.password""#)
        #expect(fromFile.database == "postgres://push@db/r" && fromFile.databasePasswordFile == "/etc/push/db.password")
        let fromEnv = try config(#""database": "postgres://push@db/r", "databasePasswordEnv": "PUSH_DB_PASSWORD""#)
        #expect(fromEnv.databasePasswordEnv == "PUSH_DB_PASSWORD" && fromEnv.databasePasswordFile == nil)
        #expect(throws: ConfigurationError.self) {
            try config(#""database": "postgres://push@db/r", "databasePasswordFile": "f", "databasePasswordEnv": "E""#)
        }
        #expect(throws: ConfigurationError.self) { try config(#""database": "data/x.sqlite", "databasePasswordEnv": "E""#) }
    }

    @Test func aPasswordIsReadFromItsFileAndAMissingOneIsAClearError() throws {
        let server = try PostgresTestServer.shared()
        let url = try server.makeDatabase()
        let file = makeTempDirectory() + "/password"
        try "unused-by-a-trusting-server\n".write(toFile: file, atomically: true, encoding: .utf8)
        #expect(chmod(file, 0o600) == 0)
        let registry = try PostgresRegistry.open(url: url, passwordFile: file, passwordEnv: nil, connections: 1)
        #expect(try registry.schemaVersion() == PostgresSchema.currentVersion)
        #expect { _ = try PostgresRegistry.open(url: url, passwordFile: file + ".missing", passwordEnv: nil) } throws: {
            ($0 as? StoreError)?.message == "databasePasswordFile: \(file).missing: no such file"
        }
        #expect { _ = try PostgresRegistry.open(url: url, passwordFile: nil, passwordEnv: "PUSHPROVIDER_TEST_UNSET_VARIABLE") } throws: {
            ($0 as? StoreError)?.message.contains("PUSHPROVIDER_TEST_UNSET_VARIABLE") == true
        }
    }

    /// The password file is read by the one secret-file loader: before it, one anyone on the machine could read was
    /// used (a command that skips the configuration's check, a library caller, never got a refusal).
    @Test func aPasswordFileOtherUsersCanReadIsRefusedBeforeConnecting() throws {
        let file = makeTempDirectory() + "/password"
        try "unused-by-a-trusting-server\n".write(toFile: file, atomically: true, encoding: .utf8)
        #expect(chmod(file, 0o644) == 0)
        // Nothing listens on port 1: had the password been accepted, the error would be the database's.
        #expect { _ = try PostgresRegistry.open(url: "postgres://push@127.0.0.1:1/db", passwordFile: file, passwordEnv: nil) } throws: {
            guard let error = $0 as? StoreError, error.code == .invalidInput else { return false }
            return error.message.hasPrefix("databasePasswordFile: \(file) is accessible by other users (mode 0644)")
                && !error.message.contains("unused-by")
        }
    }

    @Test func aConnectionTheServerKilledIsUnavailableOrReplacedNeverAHangAndNothingListeningIsUnavailable() throws {
        let server = try PostgresTestServer.shared()
        let url = try server.makeDatabase("gone")
        let registry = try PostgresRegistry(url: PostgresURL(parsing: url), password: nil, connections: 1, queryTimeoutSeconds: 5)
        let store = registry.deliveryStore
        try registry.register(app: "a", token: testToken(1))
        // Every connection of this database is killed by the server (as a failover or restart does).
        let name = try PostgresURL(parsing: url).database
        try server.psql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '\(name)' AND pid <> pg_backend_pid()")
        // Once the client has seen the server close it, the pool drops the connection before using it (a query
        // written to a closed channel is never answered) and this call opens a new one; before that, the call
        // fails as unavailable — at once when the close reaches the client first, at the statement deadline when
        // the query crossed the server's close on the wire (seen in make test's parallel phase). Either way within
        // the deadline (plus a second for a loaded machine), never another error.
        let started = Date()
        do throws(StoreError) {
            _ = try store.counts(id: "x")
        } catch {
            #expect(error.kind == .unavailable)
        }
        #expect(Date().timeIntervalSince(started) < 5 + 1)
        // The broken connection was dropped: the next call opens a new one.
        #expect(try store.devices(app: "a", channel: nil, environment: nil, after: "", limit: 10).count == 1)
        // Nothing listening at all is unavailable too, not a crash or a hang.
        let port = try PostgresTestServer.freePort()
        let nowhere = try PostgresURL(parsing: "postgres://postgres@127.0.0.1:\(port)/none")
        #expect { _ = try PostgresRegistry(url: nowhere, password: nil) } throws: { ($0 as? StoreError)?.code == .ioError }
    }
}
