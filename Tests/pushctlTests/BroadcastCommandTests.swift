import Foundation
import PushCore
import PushStore
import Testing

/// `pushctl broadcast` as cron runs it: real processes, a real simulator process, a real database file.
@Suite(.timeLimit(.minutes(4))) struct BroadcastCommandTests {
    struct World {
        let dir: URL
        let config: String
        let record: String
        let simulator: Process

        static func make(tokens: Int, delayMs: Int = 0, simulatorArgs: [String] = [], devices: String? = nil) async throws -> World {
            let dir = try CLI.temporaryDirectory()
            let certs = dir.appendingPathComponent("certs").path
            let made = try await CLI.run(["cert", "make-dev", "--out", certs, "--topic", "com.example.app"])
            guard made.status == 0 else { throw Failure(made.stderr) }
            let port = try freePort()
            let config = dir.appendingPathComponent("pushctl.json").path
            try """
                {"database": "registry.sqlite",
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
            let simulator = try CLI.start(args)
            try CLI.waitForPort(port)
            return World(dir: dir, config: config, record: record, simulator: simulator)
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

        func stop() {
            simulator.terminate()
            simulator.waitUntilExit()
            try? FileManager.default.removeItem(at: dir)
        }
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ d: String) { description = d }
    }

    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = 0
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) } }
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
        return Int(UInt16(bigEndian: addr.sin_port))
    }

    @Test func killMinus9ThenResumeGivesEveryDeviceOneOutcome() async throws {
        let w = try await World.make(tokens: 3000)
        defer { w.stop() }
        // --rate paces pages of 1000 devices, so the kill lands while most devices are still to come.
        let args = ["broadcast", "--config", w.config, "--app", "example", "--id", "digest-test", "--alert", "Digest", "--json", "--rate", "300"]
        let first = try CLI.start(args)
        // Kill it hard once a good part has been delivered (outcomes are committed as they come back).
        let registry = try Registry(path: w.dir.appendingPathComponent("registry.sqlite").path)
        let deadline = Date().addingTimeInterval(120)
        while Date() < deadline, first.isRunning, ((try? registry.broadcastCounts(id: "digest-test").done) ?? 0) < 300 {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(first.isRunning, "the broadcast ended (status \(first.isRunning ? -1 : first.terminationStatus)) before it could be killed")
        kill(first.processIdentifier, SIGKILL)
        first.waitUntilExit()
        let beforeKill = try w.received()

        // The same cron line again: it takes over the dead run's lease and resumes.
        let second = try await CLI.run(args, timeout: 180)
        #expect(second.status == 0, "\(second.stderr)")
        guard second.status == 0 else { return }
        let summary = try JSONValue(parsing: second.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(summary["state"]?.stringValue == "completed")
        #expect(summary["done"] == .int(3000))  // every token ends with exactly one final outcome
        #expect(summary["accepted"] == .int(3000))

        let all = try w.received()
        var copies: [String: Int] = [:]
        for token in all { copies[token, default: 0] += 1 }
        #expect(copies.count == 3000)
        let twice = copies.values.filter { $0 > 1 }.count
        // Only the in-flight window at the kill may repeat, and every repeat is reported as possibly duplicated.
        let flagged = Int(summary["possiblyDuplicated"]?.intValue ?? 0)
        #expect(twice <= flagged)
        #expect(twice < 3000 - beforeKill.count + 1)
        #expect(Set(beforeKill).count == beforeKill.count)

        // Cron fires again: a completed id is not sent twice.
        let third = try await CLI.run(args)
        #expect(third.status == 0)
        #expect(third.stderr.contains("already completed"))
        #expect(try w.received().count == all.count)
    }

    @Test func aSecondConcurrentRunExitsFour() async throws {
        let w = try await World.make(tokens: 1500, delayMs: 200)
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
        let w = try await World.make(tokens: 25)
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
