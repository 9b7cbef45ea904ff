import Foundation
import TestSupport
import PushCore
import PushStore
import Testing

/// The CLI on a PostgreSQL registry (`"database": "postgres://…"`): the same commands, the same results as on
/// SQLite, run as a user runs them.
@Suite(.timeLimit(.minutes(4))) struct PostgresCommandTests {
    typealias World = BroadcastCommandTests.World

    @Test func aBroadcastOnPostgreSQLReachesEveryDeviceOnceAndTheSameIdAgainSendsNothing() async throws {
        let database = try await PostgresTestServer.shared().makeDatabase("cli")
        var w = try await World.make(tokens: 1200, database: database)
        defer { w.stop() }
        let count = try await CLI.run(["tokens", "count", "--config", w.config, "--app", "example"])
        #expect(count.status == 0 && count.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "1200", "\(count.stderr)")
        let args = ["broadcast", "--config", w.config, "--app", "example", "--id", "pg-1", "--alert", "Hello", "--json"]
        let run = try await CLI.run(args, timeout: 120)
        #expect(run.status == 0, "\(run.stderr)")
        let summary = try JSONValue(parsing: run.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(summary["state"]?.stringValue == "completed")
        #expect(summary["accepted"] == .int(1200) && summary["total"] == .int(1200))
        var copies: [String: Int] = [:]
        for token in try w.received() { copies[token, default: 0] += 1 }
        #expect(copies.count == 1200 && copies.values.allSatisfy { $0 == 1 })
        // What the database holds, read back through the store.
        let registry = try w.openRegistry()
        let record = try #require(try await registry.run { try $0.broadcast(id: "pg-1") })
        #expect(record.state == .completed)
        let shards = try await registry.run { try $0.deliveryStore.shards(id: "pg-1") }
        #expect(shards.count == 1 && shards[0].state == .done && shards[0].checkpoint == World.token(1199))
        #expect(summary["workers"]?.objectPairs?.count == 1)
        #expect(try await registry.run { try $0.broadcastCounts(id: "pg-1") }.accepted == 1200)
        // The lean ledger: accepted devices of a broadcast to every device leave no row of their own.
        #expect(try await registry.run { try $0.recentDeliveries(app: "example", limit: 5) }.isEmpty)
        #expect(try await registry.run { try $0.deliveryStore.storedOutcomes(id: "pg-1", after: "", through: BroadcastShard.keySpaceEnd) }.isEmpty)
        let again = try await CLI.run(args)
        #expect(again.status == 0 && again.stderr.contains("already completed"))
        #expect(try w.received().count == 1200)
    }

    @Test func aPasswordInTheDatabaseURLIsRefusedWithOneLineAndExitTwo() async throws {
        let dir = try CLI.temporaryDirectory()
        let config = dir.appendingPathComponent("pushctl.json").path
        try #"{"database": "postgres://push:secret@127.0.0.1:1/db", "apps": {}}"#.write(toFile: config, atomically: true, encoding: .utf8)
        let result = try await CLI.run(["tokens", "count", "--config", config, "--app", "example"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("databasePasswordFile"))
        #expect(!result.stderr.contains("secret") && !result.stdout.contains("secret"))
    }

    @Test func aPasswordVariableThatIsNotSetIsAConfigurationErrorExitingTwo() async throws {
        let dir = try CLI.temporaryDirectory()
        let config = dir.appendingPathComponent("pushctl.json").path
        try #"{"database": "postgres://push@127.0.0.1:1/db", "databasePasswordEnv": "PUSHCTL_TEST_UNSET_DB_PASSWORD", "apps": {"example": {"topic": "com.example.app", "auth": {"p8": "k.p8", "keyId": "ABC123DEFG", "teamId": "TEAM123456"}}}}"#
            .write(toFile: config, atomically: true, encoding: .utf8)
        for command in [["tokens", "count"], ["broadcast", "--alert", "x"], ["deliveries"]] {
            let words = command.count > 1 && command[0] == "tokens" ? 2 : 1
            let args = Array(command.prefix(words)) + ["--config", config, "--app", "example"] + Array(command.dropFirst(words))
            let result = try await CLI.run(args, unset: ["PUSHCTL_TEST_UNSET_DB_PASSWORD"])
            #expect(result.status == 2, "\(command): \(result.stderr)")
            #expect(result.stderr.contains("PUSHCTL_TEST_UNSET_DB_PASSWORD is not set"), "\(command): \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(command): \(result.stderr)")
        }
    }
}
