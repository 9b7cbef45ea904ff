import PushSimulator
import Foundation
import PushCore
import Testing
import TestSupport

/// `pushctl simulator`, run as the built binary.
@Suite(.timeLimit(.minutes(2)))
struct SimulatorCommandTests {
    /// `.build/debug/pushctl`, next to the test bundle (fallback: the package's own .build).
    static var pushctl: String { BuiltPushctl.path }

    @Test func servesUntilSIGTERMThenPrintsASummary() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("simcli-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir + "/certs", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let pki = try SimulatorPKI()
        try pki.ca.certificatePEM.write(toFile: dir + "/certs/ca.pem", atomically: true, encoding: .utf8)
        try pki.server.certificatePEM.write(toFile: dir + "/certs/server.pem", atomically: true, encoding: .utf8)
        try pki.server.keyPEM.write(toFile: dir + "/certs/server.key", atomically: true, encoding: .utf8)
        try #"{"database": "db.sqlite", "simulator": {"certificates": "certs"}}"#
            .write(toFile: dir + "/pushctl.json", atomically: true, encoding: .utf8)
        try #"[{"token": "\#(hexToken(9))", "state": "unregistered", "timestamp": 1700000000000}]"#
            .write(toFile: dir + "/devices.json", atomically: true, encoding: .utf8)

        let child = try Child([
            "simulator", "--config", dir + "/pushctl.json", "--port", "0", "--devices", dir + "/devices.json",
            "--record", dir + "/record.jsonl",
        ])
        defer { child.process.stop() }
        let listening = await child.wait(seconds: 15) { child.stdout.contains("listening on") }
        #expect(listening, "stdout: \(child.stdout) stderr: \(child.stderr)")
        let line = try #require(child.stdout.split(separator: "\n").first { $0.contains("listening on") })
        let port = try #require(Int(line.split(separator: ":").last?.prefix(while: \.isNumber) ?? ""))

        let client = try await H2TestClient.connect(
            port: port, caPEM: pki.ca.certificatePEM, identity: try pki.client(uid: SimulatorFixture.topic))
        let ok = try await client.send(notification())
        let gone = try await client.send(notification(token: hexToken(9)))
        await client.close()
        #expect(ok.status == 200)
        #expect(gone.status == 410)
        #expect(try JSONValue(parsing: gone.body) == JSONValue(parsing: #"{"reason":"Unregistered","timestamp":1700000000000}"#))

        child.process.terminate()  // SIGTERM
        let exited = await child.process.exited(within: 15)
        try #require(exited, "pushctl simulator did not exit within 15 s of SIGTERM")
        #expect(child.process.terminationStatus == 0)
        #expect(child.stdout.contains("simulator: 2 requests, 1 accepted"), "\(child.stdout)")
        #expect(child.stdout.contains("Unregistered: 1"))
        let records = try String(contentsOfFile: dir + "/record.jsonl", encoding: .utf8).split(separator: "\n")
        #expect(records.count == 1)
        #expect(try JSONValue(parsing: String(records[0]))["token"] == .string(hexToken()))
    }

    @Test func badFlagsAreUsageErrors() async throws {
        for arguments in [
            ["simulator", "--client-auth", "sometimes"], ["simulator", "--fraction-503", "2"],
            ["simulator", "--certificates", "/nonexistent/dir"],
            ["simulator", "--fcm-service-account", "/tmp/never-written.json"],
            ["simulator", "--client-auth", "either", "--access-token-lifetime", "0"],
        ] {
            // Run to completion with ProcessRunner (posix_spawn, waitpid), not Foundation's Process: under a loaded
            // parallel run a Process child was still "running" after 15 s, and reading its terminationStatus then
            // crashed the whole test process.
            let outcome = try await ProcessRunner.run(URL(fileURLWithPath: Self.pushctl), arguments, timeout: 60)
            #expect(outcome.status == 2, "\(arguments): \(outcome.stderr)")
            #expect(outcome.stderr.hasSuffix("\n"), "\(arguments): \(outcome.stderr)")
            #expect(outcome.stderr.split(separator: "\n").count == 1, "\(arguments): \(outcome.stderr)")
        }
    }
}

/// `pushctl args…` in the background, its stdout and stderr in files read as they grow.
final class Child: Sendable {
    let process: ChildProcess
    private let outPath: String
    private let errPath: String

    /// `cwd`: where it runs (nil: this process's directory, the checkout). A directory without `Config/pushctl.json`
    /// keeps the checkout's configuration (and the development credentials it names) out of the test.
    init(_ arguments: [String], cwd: String? = nil) throws {
        let base = NSTemporaryDirectory() + "simcli-child-\(UUID().uuidString)"
        (outPath, errPath) = (base + ".out", base + ".err")
        process = try ChildProcess(SimulatorCommandTests.pushctl, arguments, stdoutPath: outPath, stderrPath: errPath, cwd: cwd)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: outPath)
        try? FileManager.default.removeItem(atPath: errPath)
    }

    var stdout: String { (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "" }
    var stderr: String { (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "" }

    /// Polls until `predicate` holds or the deadline passes.
    func wait(seconds: Double, until predicate: () -> Bool) async -> Bool {
        (try? await waitUntil(deadline: .seconds(seconds), every: .milliseconds(25), "the child's condition") { predicate() }) != nil
    }
}
