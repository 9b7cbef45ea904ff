import Foundation
import PushCore
import PushSimulator
import Testing
import enum TestSupport.BuiltPushctl
@testable import PushSender

/// The server that found issue 57, as a referee: Python's `h2` (PyPI 4.4.1, installed by Tests/referees/install.sh)
/// advertising SETTINGS_MAX_CONCURRENT_STREAMS = 1 from the connection's first frame and closing the connection for a
/// stream over it (Tests/referees/h2_strict_apns.py). It answers a turn of its event loop after each request, so
/// streams overlap as on a real server. Our simulator plays the same rules (docs/simulator.md, "Stream limits"); this
/// checks them against an implementation we did not write. A missing module fails the test; it never skips.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct StrictH2RefereeTests {
    /// The referee server, started on a free port; stopped (SIGTERM to its pid) by ``stop()``, which returns its counts.
    final class Referee: @unchecked Sendable {
        let process = Process()
        let output = Pipe()
        let port: Int
        let dir: String

        init(limit: Int, pki: SimulatorPKI) throws {
            dir = NSTemporaryDirectory() + "h2-referee-" + UUID().uuidString
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            try pki.server.certificatePEM.write(toFile: dir + "/server.pem", atomically: true, encoding: .utf8)
            try pki.server.keyPEM.write(toFile: dir + "/server.key", atomically: true, encoding: .utf8)
            let script = BuiltPushctl.packageRoot.appendingPathComponent("Tests/referees/h2_strict_apns.py").path
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["python3", script, "--cert", dir + "/server.pem", "--key", dir + "/server.key", "--limit", String(limit)]
            process.standardOutput = output
            try process.run()
            // Its first line: `port N` (or nothing, when h2 is missing and it exits).
            var line: [UInt8] = []
            let handle = output.fileHandleForReading
            while true {
                let byte = handle.readData(ofLength: 1)
                guard let b = byte.first else { break }
                if b == 0x0a { break }
                line.append(b)
            }
            let words = String(decoding: line, as: UTF8.self).split(separator: " ")
            guard words.count == 2, words[0] == "port", let port = Int(words[1]) else {
                process.terminate()
                throw TransportError(code: 0, message: "the h2 referee did not start (is h2 4.4.1 installed? Tests/referees/install.sh)")
            }
            self.port = port
        }

        /// Stops it and returns its counts (`answered`, `connections`, `excess-closures`).
        func stop() -> [String: Int] {
            if process.isRunning { kill(process.processIdentifier, SIGTERM) }
            process.waitUntilExit()
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            try? FileManager.default.removeItem(atPath: dir)
            let words = text.split(whereSeparator: { $0 == " " || $0 == "\n" }).map(String.init)
            var counts: [String: Int] = [:]
            var i = 0
            while i + 1 < words.count {
                if let n = Int(words[i + 1]) { counts[words[i]] = n }
                i += 2
            }
            return counts
        }
    }

    /// 3,000 notifications through one connection at a limit of 1: every one accepted once, none flagged possibly
    /// duplicated, and the server never closed a connection for a stream over its limit.
    @Test func aOneStreamH2ServerAcceptsEveryNotificationWithoutClosingForExcess() async throws {
        let pki = try SimulatorPKI()
        let referee = try Referee(limit: 1, pki: pki)
        let dir = NSTemporaryDirectory() + "h2-referee-ca-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try pki.ca.certificatePEM.write(toFile: dir + "/ca.pem", atomically: true, encoding: .utf8)
        let id = try pki.client(uid: "com.example.app", environment: .development, topics: nil)
        let sender = try APNsSender(
            target: SenderTarget(host: "localhost", port: referee.port, caFile: dir + "/ca.pem", address: "127.0.0.1"),
            credentials: FixedCertificate(tlsIdentity: TLSIdentity(certificatePEM: Array(id.certificatePEM.utf8), privateKeyPEM: Array(id.keyPEM.utf8))),
            configuration: SenderConfiguration(requestTimeoutMs: 20_000, maxAttempts: 4), sleeper: RecordingSleeper(), random: { 0.5 })
        let requests = (0..<3000).map {
            NotificationRequest(
                token: testToken($0), topic: "com.example.app", pushType: .alert, priority: .immediate,
                notificationId: NotificationID.random(), payload: Array(#"{"aps":{"alert":"Hi"}}"#.utf8))
        }
        let box = ResultBox()
        let started = Date()
        await sender.run(requests: requests) { box.add($0) }
        await sender.shutdown()
        let counts = referee.stop()
        let results = box.results
        let failures = results.filter { $0.kind != .accepted }
        print("REFEREE h2 4.4.1, stream limit 1: \(results.count) results, \(failures.count) not accepted, \(results.filter(\.possiblyDuplicated).count) possibly duplicated; server \(counts); libcurl \(LinkedLibraries.curl); \(String(format: "%.1f", Date().timeIntervalSince(started))) s")
        #expect(results.count == 3000)
        #expect(failures.isEmpty, "\(failures.count) not accepted: \(Set(failures.map { "\($0.kind) \($0.error ?? "")" }).prefix(3))")
        #expect(results.allSatisfy { !$0.possiblyDuplicated })
        #expect(counts["excess-closures"] == 0, "the server closed a connection for a stream over its limit: \(counts)")
        #expect(counts["answered"] == 3000, "\(counts)")
    }
}
