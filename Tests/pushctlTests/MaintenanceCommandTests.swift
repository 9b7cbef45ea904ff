import Foundation
import PushCore
import PushStore
import Testing
import TestSupport

/// Retention as operators run it, through the binary: `pushctl maintenance` (one pass, for cron) and the
/// passes `pushctl serve` and `pushctl worker` make when they start.
@Suite(.timeLimit(.minutes(2))) struct MaintenanceCommandTests {
    static let dayMs: Int64 = 86_400_000

    @Test func maintenanceDeletesHistoryOlderThanTheRetentionAndSaysWhat() async throws {
        let dir = try CLI.temporaryDirectory()
        let (config, database) = try DeliveriesCommandTests.config(in: dir, extra: #""deliveryRetentionDays": 10,"#)
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let rows = [
            DeliveriesCommandTests.row(1, DeliveriesCommandTests.tokens[0], .accepted, 200, nil, nil, at: now - 12 * Self.dayMs),
            DeliveriesCommandTests.row(2, DeliveriesCommandTests.tokens[1], .accepted, 200, nil, nil, at: now - 11 * Self.dayMs),
            DeliveriesCommandTests.row(3, DeliveriesCommandTests.tokens[2], .accepted, 200, nil, nil, at: now - 9 * Self.dayMs),
        ]
        try await SQLiteRegistry(path: database).run { try $0.recordDeliveries(rows) }
        let first = try await CLI.run(["maintenance", "--config", config])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains("(10 days) deleted: 2 delivery-log rows, 0 prune-log rows"), "\(first.stdout)")
        let left = try await SQLiteRegistry(path: database).run { try $0.deliveries(DeliveryQuery(app: "example")) }
        #expect(left.records.map(\.token) == [DeliveriesCommandTests.tokens[2]])
        let second = try await CLI.run(["maintenance", "--config", config])
        #expect(second.status == 0 && second.stdout.contains("deleted: 0 delivery-log rows"), "\(second.stdout)")
        // A retention out of range is a configuration error: exit 2, nothing deleted.
        let (bad, _) = try DeliveriesCommandTests.config(in: dir, extra: #""deliveryRetentionDays": 0,"#)
        let refused = try await CLI.run(["maintenance", "--config", bad])
        #expect(refused.status == 2 && refused.stderr.contains("deliveryRetentionDays must be between 1 and 3650"))
    }

    @Test(arguments: [["worker"], ["serve", "--port", "0", "--admin-port", "0"]])
    func serveAndWorkerTrimTheHistoryWhenTheyStart(_ command: [String]) async throws {
        let dir = try CLI.temporaryDirectory()
        // A production endpoint: `serve` starts no simulator (and loads no credentials: it only logs that).
        let (config, database) = try DeliveriesCommandTests.config(in: dir, extra: #""deliveryRetentionDays": 5,"#, endpoint: "production")
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let registry = try SQLiteRegistry(path: database)
        let rows = [
            DeliveriesCommandTests.row(1, DeliveriesCommandTests.tokens[0], .accepted, 200, nil, nil, at: now - 6 * Self.dayMs),
            DeliveriesCommandTests.row(2, DeliveriesCommandTests.tokens[1], .accepted, 200, nil, nil, at: now - 1000),
        ]
        try await registry.run { try $0.recordDeliveries(rows) }
        let process = try CLI.startCapturing(command + ["--config", config])
        defer { if process.isRunning { process.terminate() } }
        var left = -1
        try? await waitUntil(deadline: .seconds(60), every: .milliseconds(100), "the history was trimmed") {
            left = try await registry.run { try $0.deliveries(DeliveryQuery(app: "example")).records.count }
            return left == 1 || !process.isRunning
        }
        #expect(left == 1, "\(command): \(process.stderrText)")
        process.terminate()
        try await process.exited()
        #expect(process.stderrText.contains("delivery history trimmed"), "\(process.stderrText)")
        #expect(process.stderrText.contains("deliveries=1"), "\(process.stderrText)")
    }

    /// A webhook receiver as a backend might run it: Python's http.server, recording each POST (headers and
    /// body) as one JSON line, answering 200; over TLS with `tls` (certificate and key PEM files).
    static func startReceiver(record: String, port: Int, tls: (certificate: String, key: String)? = nil) async throws -> ChildProcess {
        let script = """
            import http.server, json, ssl, sys
            class H(http.server.BaseHTTPRequestHandler):
                def do_POST(self):
                    body = self.rfile.read(int(self.headers['Content-Length'])).decode()
                    with open(sys.argv[2], 'a') as f:
                        f.write(json.dumps({'headers': {k.lower(): v for k, v in self.headers.items()}, 'body': body}) + '\\n')
                    self.send_response(200); self.end_headers()
                def log_message(self, *a): pass
            server = http.server.HTTPServer(('127.0.0.1', int(sys.argv[1])), H)
            if len(sys.argv) > 3:
                context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
                context.load_cert_chain(sys.argv[3], sys.argv[4])
                server.socket = context.wrap_socket(server.socket, server_side=True)
            server.serve_forever()
            """
        // Output to /dev/null, not the test's pipes (an orphan holding them would keep `swift test` waiting).
        let process = try ChildProcess(
            "/usr/bin/env", ["python3", "-c", script, String(port), record] + (tls.map { [$0.certificate, $0.key] } ?? []))
        do { try await CLI.waitForPort(port) } catch {
            process.kill()
            throw error
        }
        return process
    }

    @Test func maintenancePostsTheWebhookEventsASendLeftInTheOutbox() async throws {
        // A send from cron prunes a dead token; no serve or worker runs: maintenance delivers the event.
        let later = Int64(Date().timeIntervalSince1970 * 1000) + 60_000
        let dead = BroadcastCommandTests.World.token(1)
        var w = try await BroadcastCommandTests.World.make(
            tokens: 3, devices: #"[{"token":"\#(dead)","state":"unregistered","timestamp":\#(later)}]"#)
        defer { w.stop() }
        let port = try BroadcastCommandTests.freePort()
        let record = w.dir.appendingPathComponent("webhook.jsonl").path
        #expect(FileManager.default.createFile(  // a secret: not readable by others, or pushctl refuses it
            atPath: w.dir.appendingPathComponent("hook.secret").path, contents: Data("hook-secret\n".utf8),
            attributes: [.posixPermissions: 0o600]))
        var config = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: w.config))) as? [String: Any])
        var apps = try #require(config["apps"] as? [String: Any])
        var app = try #require(apps["example"] as? [String: Any])
        app["webhook"] = ["url": "http://127.0.0.1:\(port)/hook", "secretFile": "hook.secret"]
        apps["example"] = app
        config["apps"] = apps
        try JSONSerialization.data(withJSONObject: config).write(to: URL(fileURLWithPath: w.config))
        let sent = try await CLI.run(["send", "--config", w.config, "--app", "example", "--token", dead, "--alert", "x"])
        #expect(sent.status == 1 && sent.stdout.contains("pruned"), "\(sent.stdout) \(sent.stderr)")
        let receiver = try await Self.startReceiver(record: record, port: port)
        defer { receiver.kill() }
        let run = try await CLI.run(["maintenance", "--config", w.config])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("webhook of example: 1 events delivered, 0 waiting"), "\(run.stdout)")
        let lines = ((try? String(contentsOfFile: record, encoding: .utf8)) ?? "").split(separator: "\n")
        #expect(lines.count == 1)
        let request = try JSONValue(parsing: String(try #require(lines.first)))
        let body = try JSONValue(parsing: try #require(request["body"]?.stringValue))
        #expect(body["app"]?.stringValue == "example")
        let event = try #require(body["events"]?.arrayValue?.first)
        #expect(event["type"]?.stringValue == "tokenPruned" && event["token"]?.stringValue == dead && event["reason"]?.stringValue == "Unregistered")
        #expect(request["headers"]?["x-pushprovider-signature"]?.stringValue?.hasPrefix("sha256=") == true)
        // Nothing is posted twice.
        let again = try await CLI.run(["maintenance", "--config", w.config])
        #expect(again.stdout.contains("webhook of example: 0 events delivered, 0 waiting"), "\(again.stdout)")
    }

    @Test func aWebhookReceiverWhosePrivateCASignedItsCertificateIsReachedThroughTheWebhooksCAFile() async throws {
        let later = Int64(Date().timeIntervalSince1970 * 1000) + 60_000
        let dead = BroadcastCommandTests.World.token(1)
        var w = try await BroadcastCommandTests.World.make(
            tokens: 3, devices: #"[{"token":"\#(dead)","state":"unregistered","timestamp":\#(later)}]"#)
        defer { w.stop() }
        let port = try BroadcastCommandTests.freePort()
        let record = w.dir.appendingPathComponent("webhook.jsonl").path
        let secret = w.dir.appendingPathComponent("hook.secret").path
        try "hook-secret\n".write(toFile: secret, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: secret)  // secret files are refused when others can read them
        func configure(caFile: String?) throws {
            var config = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: w.config))) as? [String: Any])
            var apps = try #require(config["apps"] as? [String: Any])
            var app = try #require(apps["example"] as? [String: Any])
            var hook: [String: Any] = ["url": "https://127.0.0.1:\(port)/hook", "secretFile": "hook.secret"]
            if let caFile { hook["caFile"] = caFile }
            app["webhook"] = hook
            apps["example"] = app
            config["apps"] = apps
            try JSONSerialization.data(withJSONObject: config).write(to: URL(fileURLWithPath: w.config))
        }
        try configure(caFile: nil)
        let sent = try await CLI.run(["send", "--config", w.config, "--app", "example", "--token", dead, "--alert", "x"])
        #expect(sent.status == 1 && sent.stdout.contains("pruned"), "\(sent.stdout) \(sent.stderr)")
        // The receiver's certificate is the development CA's (`cert make-dev`: 127.0.0.1 among its names).
        let certs = w.dir.appendingPathComponent("certs").path
        let receiver = try await Self.startReceiver(record: record, port: port, tls: (certs + "/server.pem", certs + "/server.key"))
        defer { receiver.kill() }
        // Without the CA the receiver does not verify: nothing is posted, the event waits.
        let unverified = try await CLI.run(["maintenance", "--config", w.config])
        #expect(unverified.stdout.contains("webhook of example: 0 events delivered, 1 waiting"), "\(unverified.stdout) \(unverified.stderr)")
        try configure(caFile: "certs/ca.pem")
        // The failed post made the event due again after 1 s: until then a run delivers nothing and leaves it waiting.
        var run = try await CLI.run(["maintenance", "--config", w.config])
        try await waitUntil(every: .milliseconds(200), "a maintenance run delivers the event once it is due again") {
            if run.stdout.contains("webhook of example: 0 events delivered, 1 waiting") {
                run = try await CLI.run(["maintenance", "--config", w.config])
            }
            return !run.stdout.contains("webhook of example: 0 events delivered, 1 waiting")
        }
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("webhook of example: 1 events delivered, 0 waiting"), "\(run.stdout) \(run.stderr)")
        let lines = ((try? String(contentsOfFile: record, encoding: .utf8)) ?? "").split(separator: "\n")
        #expect(lines.count == 1)
    }
}
