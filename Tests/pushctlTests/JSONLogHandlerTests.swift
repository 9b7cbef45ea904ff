import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import PushCore
import Testing
import TestSupport

/// `--log-format json` / `PUSHCTL_LOG_FORMAT=json`, run as a user would: every stderr line of `pushctl serve` and
/// `pushctl send` is one JSON object with timestamp, level, label, message and metadata fields; tokens appear
/// masked only; no key or password text.
@Suite(.timeLimit(.minutes(2))) struct JSONLogHandlerTests {
    typealias World = BroadcastCommandTests.World

    /// Parses every non-empty stderr line as a JSON object with the four standard fields.
    func jsonLines(_ stderr: String) throws -> [JSONValue] {
        let timestamp = try Regex(#"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$"#)
        var lines: [JSONValue] = []
        for line in stderr.split(separator: "\n") where !line.isEmpty {
            let value = try JSONValue(parsing: String(line))
            #expect(value.objectPairs != nil, "not an object: \(line)")
            let stamp = try #require(value["timestamp"]?.stringValue, "no timestamp: \(line)")
            #expect(stamp.wholeMatch(of: timestamp) != nil, "timestamp \(stamp) is not RFC 3339 UTC with ms")
            #expect(["trace", "debug", "info", "notice", "warning", "error", "critical"].contains(value["level"]?.stringValue ?? ""))
            #expect(value["label"]?.stringValue?.isEmpty == false)
            #expect(value["message"]?.stringValue != nil)
            lines.append(value)
        }
        return lines
    }

    func http(_ method: String, _ url: String, key: String, body: String? = nil) async throws -> Int {
        try await ReloadCertificateTests.call(method, url, key: key, body: body).0
    }

    @Test func serveLogsOneJSONObjectPerLineWithTheAppTheJobAndMaskedTokens() async throws {
        var w = try await World.make(tokens: 1, startSimulator: false)  // serve runs the simulator itself
        defer { w.stop() }
        let port = try BroadcastCommandTests.freePort()
        let serve = try CLI.startCapturing(
            ["serve", "--config", w.config, "--port", String(port), "--admin-port", String(port), "--log-format", "json"],
            environment: ["LOG_LEVEL": "debug", "PUSHCTL_LOG_FORMAT": "text"])  // the flag wins
        defer { if serve.isRunning { serve.terminate() } }
        try await CLI.waitForPort(port)
        try await CLI.waitForPort(w.port)
        // The banner prints the development send key on stdout, once the API listens (a moment after the port opens).
        try await waitUntil(deadline: .seconds(60), "serve's banner") {
            !serve.isRunning || serve.stdoutText.contains("Send it a notification")
        }
        let banner = serve.stdoutText.split(separator: "\n").map(String.init)
        let keyLine = try #require(banner.firstIndex { $0.contains("accepts a development send key:") }, "\(banner)")
        let key = banner[keyLine + 1].trimmingCharacters(in: .whitespaces)
        let token = String(repeating: "5a", count: 32)
        let base = "http://127.0.0.1:\(port)"
        #expect(try await http("POST", "\(base)/v1/apps/example/devices", key: key, body: #"{"token":"\#(token)"}"#) == 201)
        #expect(try await http("POST", "\(base)/v1/apps/example/notifications", key: key,
                                body: #"{"id":"job-json-1","tokens":["\#(token)"],"alert":"secret body text"}"#) == 202)
        try await waitUntil(deadline: .seconds(60), every: .milliseconds(100), "the send job's outcome was committed") {
            serve.stderrText.contains("outcome committed") || !serve.isRunning
        }
        #expect(try await http("DELETE", "\(base)/v1/apps/example/devices/\(token)", key: key) == 204)
        serve.terminate()
        try await serve.exited()

        let stderr = serve.stderrText
        let lines = try jsonLines(stderr)
        #expect(lines.count >= 4, "\(stderr)")
        let masked = DeviceToken.mask(token)
        // The request log: method, masked path, status and app as fields.
        let delete = try #require(lines.first { $0["method"] == .string("DELETE") }, "\(stderr)")
        #expect(delete["path"] == .string("/v1/apps/example/devices/\(masked)"))
        #expect(delete["status"] == .string("204"))
        #expect(delete["app"] == .string("example"))
        #expect(delete["label"] == .string("pushctl.serve"))
        // The job's outcome: app, job id, notification id and the masked token.
        let outcome = try #require(lines.first { $0["message"] == .string("outcome committed") }, "\(stderr)")
        #expect(outcome["app"] == .string("example"))
        #expect(outcome["job"] == .string("job-json-1"))
        #expect(outcome["token"] == .string(masked))
        #expect(outcome["status"] == .string("200"))
        #expect(outcome["notificationId"]?.stringValue?.count == 36)
        #expect(lines.contains { $0["job"] == .string("job-json-1") && $0["level"] == .string("info") })
        // Never the token, the key, the .p12 password or a body.
        let password = try String(contentsOf: w.dir.appendingPathComponent("certs/client.p12.password"), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        for secret in [token, key, password, "secret body text"] {
            #expect(!stderr.contains(secret), "stderr holds \(secret.prefix(8))…")
        }
    }

    @Test func sendLogsJSONWhenTheEnvironmentAsksAndTextWhenTheFlagSaysSo() async throws {
        var w = try await World.make(tokens: 2)
        defer { w.stop() }
        let token = World.token(1)
        let args = ["send", "--config", w.config, "--app", "example", "--token", token, "--alert", "hello there"]
        let json = try await CLI.run(args, environment: ["PUSHCTL_LOG_FORMAT": "json", "LOG_LEVEL": "debug"])
        #expect(json.status == 0, "\(json.stderr)")
        let lines = try jsonLines(json.stderr)
        let outcome = try #require(lines.first { $0["message"] == .string("outcome committed") }, "\(json.stderr)")
        #expect(outcome["token"] == .string(DeviceToken.mask(token)))
        #expect(outcome["app"] == .string("example"))
        #expect(outcome["label"] == .string("pushctl.send"))
        #expect(!json.stderr.contains(token) && !json.stderr.contains("hello there"))

        let text = try await CLI.run(args + ["--log-format", "text"], environment: ["PUSHCTL_LOG_FORMAT": "json", "LOG_LEVEL": "debug"])
        #expect(text.status == 0, "\(text.stderr)")
        let first = try #require(text.stderr.split(separator: "\n").first, "\(text.stderr)")
        #expect((try? JSONValue(parsing: String(first))) == nil, "\(first)")
        #expect(first.contains("outcome committed"))
    }

    @Test func anUnknownLogFormatIsAUsageErrorOnOneLine() async throws {
        let flag = try await CLI.run(["payload", "--alert", "x", "--log-format", "xml"])
        #expect(flag.status == 2)
        #expect(flag.stderr.split(separator: "\n").count == 1, "\(flag.stderr)")
        #expect(flag.stdout.isEmpty)
        let env = try await CLI.run(["payload", "--alert", "x"], environment: ["PUSHCTL_LOG_FORMAT": "yaml"])
        #expect(env.status == 2)
        #expect(env.stderr == "pushctl: PUSHCTL_LOG_FORMAT must be text or json, not 'yaml'\n")
        #expect(env.stdout.isEmpty)
    }
}
