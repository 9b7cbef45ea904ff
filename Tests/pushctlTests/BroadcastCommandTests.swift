import Foundation
import PushCore
import PostgresTestSupport
import PushStore
import Testing

/// `pushctl broadcast` as cron runs it: real processes, a real simulator process, a real database file.
@Suite(.timeLimit(.minutes(4))) struct BroadcastCommandTests {
    struct World {
        let dir: URL
        let config: String
        let database: String
        let record: String
        let simulatorArgs: [String]
        let port: Int
        var simulator: Process?

        static func make(
            tokens: Int, delayMs: Int = 0, simulatorArgs: [String] = [], devices: String? = nil, startSimulator: Bool = true,
            database: String = "registry.sqlite"
        ) async throws -> World {
            let dir = try CLI.temporaryDirectory()
            let certs = dir.appendingPathComponent("certs").path
            let made = try await CLI.run(["cert", "make-dev", "--out", certs, "--topic", "com.example.app"])
            guard made.status == 0 else { throw Failure(made.stderr) }
            let port = try freePort()
            let config = dir.appendingPathComponent("pushctl.json").path
            try """
                {"database": "\(database)",
                 "simulator": {"host": "127.0.0.1", "port": \(port), "certificates": "certs"},
                 "apps": {"example": {"topic": "com.example.app", "endpoint": "simulator",
                   "auth": {"p12": "certs/client.p12", "passwordFile": "certs/client.p12.password"}}}}
                """.write(toFile: config, atomically: true, encoding: .utf8)
            let list = (0..<tokens).map { i -> String in
                let d = String(i, radix: 16)
                return "cd" + String(repeating: "0", count: 62 - d.count) + d
            }.joined(separator: "\n")
            let imported = try await CLI.run(["tokens", "import", "--config", config, "--app", "example", "-"], stdin: list)
            guard imported.status == 0 else { throw Failure(imported.stderr) }
            let record = dir.appendingPathComponent("received.jsonl").path
            var args = ["simulator", "--config", config, "--record", record] + simulatorArgs
            if delayMs > 0 { args += ["--delay-ms", String(delayMs)] }
            if let devices {
                let file = dir.appendingPathComponent("devices.json").path
                try devices.write(toFile: file, atomically: true, encoding: .utf8)
                args += ["--devices", file]
            }
            var world = World(dir: dir, config: config, database: database, record: record, simulatorArgs: args, port: port)
            if startSimulator { try world.startSimulator() }
            return world
        }

        /// Starts the simulator process (again), with its usual arguments plus `extra`.
        mutating func startSimulator(_ extra: [String] = []) throws {
            simulator = try CLI.start(simulatorArgs + extra)
            try CLI.waitForPort(port)
        }

        /// The registry the config names (SQLite file or PostgreSQL database), opened by the test.
        func openRegistry() throws -> any RegistryStore {
            if database.hasPrefix("postgres://") {
                return try PostgresRegistry(url: PostgresURL(parsing: database), password: nil, connections: 1)
            }
            return try Registry(path: dir.appendingPathComponent(database).path)
        }

        /// Stops the simulator process.
        mutating func stopSimulator() {
            simulator?.terminate()
            simulator?.waitUntilExit()
            simulator = nil
        }

        /// The simulator's record, one JSON object per accepted request.
        func records() throws -> [JSONValue] {
            let text = (try? String(contentsOfFile: record, encoding: .utf8)) ?? ""
            return try text.split(separator: "\n").map { try JSONValue(parsing: String($0)) }
        }

        /// The n-th imported token (they are imported in this form).
        static func token(_ i: Int) -> String {
            let d = String(i, radix: 16)
            return "cd" + String(repeating: "0", count: 62 - d.count) + d
        }

        /// Device tokens in the simulator's record, one entry per accepted request.
        func received() throws -> [String] {
            let text = (try? String(contentsOfFile: record, encoding: .utf8)) ?? ""
            return try text.split(separator: "\n").map { line in
                try JSONValue(parsing: String(line))["token"]?.stringValue ?? ""
            }
        }

        mutating func stop() {
            stopSimulator()
            try? FileManager.default.removeItem(at: dir)
        }
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ d: String) { description = d }
    }

    static func freePort() throws -> Int { try PostgresTestServer.freePort() }

    @Test func aSecondConcurrentRunExitsFour() async throws {
        var w = try await World.make(tokens: 1500, delayMs: 200)
        defer { w.stop() }
        let first = try CLI.start(["broadcast", "--config", w.config, "--app", "example", "--id", "slow", "--alert", "a", "--rate", "200"])
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline, try w.received().isEmpty, first.isRunning { try await Task.sleep(for: .milliseconds(20)) }
        let second = try await CLI.run(["broadcast", "--config", w.config, "--app", "example", "--id", "other", "--alert", "b"])
        #expect(second.status == 4)
        #expect(second.stderr.contains("broadcast slow is running"))
        first.interrupt()  // SIGINT: drain, checkpoint, exit 130
        first.waitUntilExit()
        #expect(first.terminationStatus == 130)
        let resumed = try await CLI.run(["broadcast", "--config", w.config, "--app", "example", "--id", "slow", "--alert", "a", "--rate", "200"], timeout: 180)
        #expect(resumed.status == 0, "\(resumed.stderr)")
        var copies: [String: Int] = [:]
        for token in try w.received() { copies[token, default: 0] += 1 }
        #expect(copies.count == 1500)
        #expect(copies.values.allSatisfy { $0 == 1 })  // a graceful stop drains: nobody gets it twice
    }

    @Test func dryRunSendsNothing() async throws {
        var w = try await World.make(tokens: 25)
        defer { w.stop() }
        let r = try await CLI.run(["broadcast", "--config", w.config, "--app", "example", "--silent", "--data", #"{"photoTitle":"Nebula"}"#, "--dry-run"])
        #expect(r.status == 0)
        #expect(r.stdout.contains("devices: 25"))
        #expect(r.stdout.contains("apns-priority: 5"))
        #expect(try w.received().isEmpty)
        let bad = try await CLI.run(["broadcast", "--config", w.config, "--app", "nope", "--alert", "x"])
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("configured apps: example"))
    }
}
