import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import PushCore
import Testing
import TestSupport

/// SIGHUP to `pushctl serve` and `pushctl worker`: the configuration is read again and applied without a restart.
@Suite(.timeLimit(.minutes(2))) struct ReloadCommandTests {
    typealias World = BroadcastCommandTests.World

    /// A new send key of `example` from `pushctl apikey new`: the key and its `sha256:` hash.
    static func newKey(config: String) async throws -> (key: String, hash: String) {
        let r = try await CLI.run(["apikey", "new", "--config", config, "--app", "example", "--kind", "send"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("then reload the server: systemctl reload pushprovider (or kill -HUP"), "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        let key = try #require(lines.first { $0.hasPrefix("key: ") }).dropFirst(5)
        let hash = try #require(lines.first { $0.hasPrefix("sha256:") })
        return (String(key), hash)
    }

    /// Writes a serve configuration: `example` on the built-in simulator with `sendKeys`, listening on `port` (and
    /// its admin listener on `adminPort`, by default the same: one listener).
    static func writeServeConfig(_ path: String, port: Int, adminPort: Int? = nil, sendKeys: [String]) throws {
        let keys = sendKeys.map { "\"\($0)\"" }.joined(separator: ", ")
        try """
            {"database": "registry.sqlite",
             "server": {"host": "127.0.0.1", "port": \(port), "admin": {"host": "127.0.0.1", "port": \(adminPort ?? port)}},
             "simulator": {"host": "127.0.0.1", "port": 0, "certificates": "certs"},
             "apps": {"example": {"topic": "com.example.app", "endpoint": "simulator", "sendKeys": [\(keys)],
                                  "auth": {"p12": "certs/client.p12", "passwordFile": "certs/client.p12.password"}}}}
            """.write(toFile: path, atomically: true, encoding: .utf8)
    }

    /// The status of `GET /v1/apps/example/devices/count` with `key`.
    static func countStatus(port: Int, key: String) async throws -> Int {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/v1/apps/example/devices/count")!)
        request.setValue("Bearer \(key)", forHTTPHeaderField: "Authorization")
        return try await URLSession.shared.answer(for: request).1.statusCode
    }

    /// Waits until `text` occurs `count` times in the process's stderr (a test failure at the deadline).
    static func waitForLog(_ process: CLI.Background, _ text: String, count: Int = 1, seconds: Double = 30) async throws {
        // Stops early when the process ends: the expectation below then says what it logged.
        try? await waitUntil(deadline: .seconds(seconds), "'\(text)' ×\(count) in the log") {
            !process.isRunning || process.stderrText.components(separatedBy: text).count - 1 >= count
        }
        #expect(process.stderrText.components(separatedBy: text).count - 1 >= count, "no '\(text)' (×\(count)) in: \(process.stderrText)")
    }

    @Test func serveTakesANewKeyOnSIGHUPFinishesTheRequestInFlightRefusesAPortChangeByNameAndABrokenFileWhole() async throws {
        var w = try await World.make(tokens: 0, startSimulator: false)
        defer { w.stop() }
        let config = w.dir.appendingPathComponent("serve.json").path
        let old = try await Self.newKey(config: w.config)
        let new = try await Self.newKey(config: w.config)
        let port = try BroadcastCommandTests.freePort()
        try Self.writeServeConfig(config, port: port, sendKeys: [old.hash])
        let serve = try CLI.startCapturing(["serve", "--config", config])
        defer { serve.stop() }
        try await waitUntil(deadline: .seconds(60), "serve listening") {
            !serve.isRunning || serve.stdoutText.contains("PushProvider is listening")
        }
        #expect(try await Self.countStatus(port: port, key: old.key) == 200, "\(serve.stderrText)")
        #expect(try await Self.countStatus(port: port, key: new.key) == 401)

        // A registration whose body is half sent when the reload lands: it completes once the rest arrives.
        let body = #"{"token":"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef","channels":["news"]}"#
        let inFlight = try RawHTTPRequest(port: port, head: """
            POST /v1/apps/example/devices HTTP/1.1\r
            Host: 127.0.0.1\r
            Authorization: Bearer \(old.key)\r
            Content-Type: application/json\r
            Content-Length: \(body.utf8.count)\r
            Connection: close\r
            \r
            \(body.prefix(20))
            """)
        defer { inFlight.hangUp() }

        // The new key added and, in the same edit, the port changed: the key applies, the port is refused by name.
        let otherPort = try BroadcastCommandTests.freePort()
        try Self.writeServeConfig(config, port: otherPort, adminPort: port, sendKeys: [old.hash, new.hash])
        kill(serve.process.processIdentifier, SIGHUP)
        try await Self.waitForLog(serve, "configuration reloaded from")
        let answer = try inFlight.finish(String(body.dropFirst(20)))
        #expect(answer.hasPrefix("HTTP/1.1 201") || answer.hasPrefix("HTTP/1.1 200"), "\(answer)")
        #expect(try await Self.countStatus(port: port, key: new.key) == 200, "the new key works without a restart")
        let refusals = serve.stderrText.split(separator: "\n").filter { $0.contains("server.port") }
        #expect(refusals.count == 1, "\(serve.stderrText)")
        #expect(refusals.first?.contains("kept the running value of server.port") == true, "\(serve.stderrText)")
        #expect(serve.stderrText.contains("server.admin") == false, "the admin address did not change")

        // A file that does not parse is refused whole: both keys still work, on the same port.
        try "{\"database\": ".write(toFile: config, atomically: true, encoding: .utf8)
        kill(serve.process.processIdentifier, SIGHUP)
        try await Self.waitForLog(serve, "configuration reload refused, the running configuration stays")
        #expect(try await Self.countStatus(port: port, key: old.key) == 200)
        #expect(try await Self.countStatus(port: port, key: new.key) == 200)

        // A key removed is refused from the next request on.
        try Self.writeServeConfig(config, port: port, sendKeys: [new.hash])
        kill(serve.process.processIdentifier, SIGHUP)
        try await Self.waitForLog(serve, "configuration reloaded from", count: 2)
        #expect(try await Self.countStatus(port: port, key: old.key) == 401)
        #expect(try await Self.countStatus(port: port, key: new.key) == 200)
        #expect(serve.isRunning, "\(serve.stderrText)")
    }

    @Test func aWorkerTakesAnAppAddedOnSIGHUPAndSendsItsBroadcastAfterRefusingABrokenFile() async throws {
        var w = try await World.make(tokens: 150, shardSize: 100)
        defer { w.stop() }
        let started = try await CLI.run(["broadcast", "--config", w.config, "--app", "example", "--id", "added", "--alert", "a", "--detach"])
        #expect(started.status == 0, "\(started.stderr)")
        // The worker starts knowing only another app: it leaves example's shards alone.
        let full = try String(contentsOfFile: w.config, encoding: .utf8)
        let workerConfig = w.dir.appendingPathComponent("worker.json").path
        let otherOnly = full.replacingOccurrences(of: #""apps": {"example":"#, with: #""apps": {"other":"#)
        #expect(otherOnly != full)
        try otherOnly.write(toFile: workerConfig, atomically: true, encoding: .utf8)
        let worker = try CLI.startCapturing(["worker", "--config", workerConfig])
        defer { worker.stop() }
        try await Self.waitForLog(worker, "started")

        try "not json".write(toFile: workerConfig, atomically: true, encoding: .utf8)
        kill(worker.process.processIdentifier, SIGHUP)
        try await Self.waitForLog(worker, "configuration reload refused, the running configuration stays")
        #expect(try w.received().isEmpty)

        try full.write(toFile: workerConfig, atomically: true, encoding: .utf8)
        kill(worker.process.processIdentifier, SIGHUP)
        try await Self.waitForLog(worker, "configuration reloaded from")
        try? await waitUntil(deadline: .seconds(60), "150 notifications received") { w.receivedCount() >= 150 || !worker.isRunning }
        #expect(try w.received().count == 150, "\(worker.stderrText)")
        worker.terminate()
        try await worker.exited()
        #expect(worker.terminationStatus == 0, "\(worker.stderrText)")
        #expect(worker.stderrText.contains("worker stopped: 2 shards finished"), "\(worker.stderrText)")
    }
}

/// One HTTP/1.1 request over a plain socket, sent in two parts: the head (and part of the body) now, the rest
/// with ``finish(_:)``, which returns the whole answer (the request says `Connection: close`).
final class RawHTTPRequest {
    private let fd: Int32

    init(port: Int, head: String) throws {
        guard let fd = CLI.connectLoopback(port: port) else { throw SocketFailure(what: "connect to 127.0.0.1:\(port)") }
        self.fd = fd
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        try write(head)
    }

    private func write(_ text: String) throws {
        let bytes = Array(text.utf8)
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { throw SocketFailure(what: "send") }
            sent += n
        }
    }

    /// Sends the rest of the body and reads the answer until the server closes (at most 30 s per read).
    func finish(_ rest: String) throws -> String {
        try write(rest)
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            answer += buffer[0..<n]
        }
        return String(decoding: answer, as: UTF8.self)
    }

    func hangUp() { close(fd) }

    struct SocketFailure: Error { let what: String }
}
