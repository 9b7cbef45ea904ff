import Foundation
import PushCore
import PushStore
import Testing
import TestSupport

/// `pushctl send` run as a user would, against a `pushctl simulator` process over real TLS.
@Suite(.timeLimit(.minutes(2))) struct SendCommandTests {
    typealias World = BroadcastCommandTests.World

    @Test func deliversAnAlertAndASilentPushWithApplesHeaders() async throws {
        var w = try await World.make(tokens: 3)
        defer { w.stop() }
        let t0 = World.token(0), t1 = World.token(1)
        let alert = try await CLI.run(["send", "--config", w.config, "--app", "example", "--token", t0, "--token", t1,
                                 "--alert", "Hi", "--badge", "1", "--sound", "default", "--json"])
        #expect(alert.status == 0, "\(alert.stderr)")
        let lines = try alert.stdout.split(separator: "\n").map { try JSONValue(parsing: String($0)) }
        #expect(lines.count == 2)
        #expect(!alert.stdout.contains(t0))  // tokens are masked in output
        let silent = try await CLI.run(["send", "--config", w.config, "--app", "example", "--all", "--silent",
                                  "--data", #"{"photoTitle":"Nebula"}"#])
        #expect(silent.status == 0, "\(silent.stderr)")
        // The simulator records a request before it answers it, so both commands' requests are recorded.
        w.stopSimulator()  // flushes the record
        let records = try w.records()
        let alerts = records.filter { $0["pushType"]?.stringValue == "alert" }
        #expect(Set(alerts.compactMap { $0["token"]?.stringValue }) == [t0, t1])
        #expect(alerts.allSatisfy { $0["priority"] == .int(10) && $0["topic"]?.stringValue == "com.example.app" })
        #expect(alerts.first?["payload"] == (try JSONValue(parsing: #"{"aps":{"alert":"Hi","badge":1,"sound":"default"}}"#)))
        let background = records.filter { $0["pushType"]?.stringValue == "background" }
        #expect(background.count == 3)
        #expect(background.allSatisfy { $0["priority"] == .int(5) })
        #expect(background.first?["payload"] == (try JSONValue(parsing: #"{"aps":{"content-available":1},"photoTitle":"Nebula"}"#)))
    }

    @Test func aDeadTokenIsPrunedAndTheExitStatusSaysSo() async throws {
        let later = Int64(Date().timeIntervalSince1970 * 1000) + 60_000
        let dead = World.token(1)
        var w = try await World.make(tokens: 3, devices: #"[{"token":"\#(dead)","state":"unregistered","timestamp":\#(later)}]"#)
        defer { w.stop() }
        let r = try await CLI.run(["send", "--config", w.config, "--app", "example", "--all", "--alert", "x"])
        #expect(r.status == 1)
        #expect(r.stdout.contains("410 Unregistered"))
        #expect(r.stdout.contains("pruned"))  // what the store did, printed once committed
        let registry = try SQLiteRegistry(path: w.dir.appendingPathComponent("registry.sqlite").path)
        #expect(try await registry.run { _ in try registry.count(app: "example") } == 2)
        let deadToken = try DeviceToken(parsing: dead)
        #expect(try await registry.run { try $0.device(app: "example", token: deadToken) } == nil)
    }

    @Test func aSendUnderAFailuresOnlyDeliveryLogLogsTheDeadTokenAndNotTheAcceptedOnes() async throws {
        let dead = World.token(1)
        var w = try await World.make(
            tokens: 3, devices: #"[{"token":"\#(dead)","state":"unregistered"}]"#,
            extraConfig: #""deliveryLog": "failures","#)
        defer { w.stop() }
        let r = try await CLI.run(["send", "--config", w.config, "--app", "example", "--all", "--alert", "x", "--json"])
        #expect(r.status == 1, "\(r.stderr)")  // one token is dead
        let printed = try r.stdout.split(separator: "\n").map { try JSONValue(parsing: String($0)) }
        #expect(printed.count == 3)  // every outcome is still reported to the caller
        let history = try await CLI.run(["deliveries", "--config", w.config, "--app", "example", "--json"])
        #expect(history.status == 0, "\(history.stderr)")
        guard case .array(let rows) = try JSONValue(parsing: Array(history.stdout.utf8)) else {
            Issue.record("not a JSON array: \(history.stdout)")
            return
        }
        #expect(rows.map { $0["token"]?.stringValue } == [dead])
        #expect(rows.first?["status"]?.stringValue == "tokenDead")
    }

    @Test func underTheDefaultDeliveryLogASendToListedTokensLogsItsAcceptedNotificationAndASendToAllDoesNot() async throws {
        var w = try await World.make(tokens: 3)
        defer { w.stop() }
        let direct = try await CLI.run(["send", "--config", w.config, "--app", "example", "--token", World.token(2), "--alert", "x"])
        #expect(direct.status == 0, "\(direct.stderr)")
        let all = try await CLI.run(["send", "--config", w.config, "--app", "example", "--all", "--alert", "y"])
        #expect(all.status == 0, "\(all.stderr)")
        #expect(try w.received().count == 4)
        let history = try await CLI.run(["deliveries", "--config", w.config, "--app", "example", "--json"])
        #expect(history.status == 0, "\(history.stderr)")
        guard case .array(let rows) = try JSONValue(parsing: Array(history.stdout.utf8)) else {
            Issue.record("not a JSON array: \(history.stdout)")
            return
        }
        #expect(rows.map { $0["token"]?.stringValue } == [World.token(2)])
        #expect(rows.first?["status"]?.stringValue == "accepted")
        let registry = try w.openRegistry()
        #expect(try await registry.run { try $0.device(app: "example", token: DeviceToken(parsing: World.token(2))) }?.lastSuccessMs != nil)
        #expect(try await registry.run { try $0.device(app: "example", token: DeviceToken(parsing: World.token(0))) }?.lastSuccessMs == nil)
    }

    /// `send --at` with `--alert-for` stores the per-locale payloads with the job; the worker sends each device its
    /// language (the default to the others). A send made now builds each request from its token alone, so it
    /// refuses per-locale text (exit 2, one line) and sends nothing.
    @Test func aScheduledSendWithPerLocaleTextGivesEachDeviceItsLanguageAndASendNowRefusesIt() async throws {
        var w = try await World.make(tokens: 0)
        defer { w.stop() }
        try await BroadcastCommandTests.importLocaleDevices(w)
        let tokens = BroadcastCommandTests.localeDevices.flatMap { ["--token", $0.token] }
        let now = try await CLI.run(["send", "--config", w.config, "--app", "example", "--alert", "Hi", "--alert-for", "de=Hallo"] + tokens)
        #expect(now.status == 2 && now.stderr.contains("per-locale text") && now.stderr.contains("--at"), "\(now.stderr)")
        #expect(now.stderr.split(separator: "\n").count == 1)
        #expect(try w.received().isEmpty)
        let stored = try await CLI.run(["send", "--config", w.config, "--app", "example", "--alert", "Good morning",
                                        "--alert-for", "de=Guten Morgen", "--alert-for", "pt-BR=Bom dia",
                                        "--at", JobsCommandTests.rfc3339(secondsFromNow: 1), "--id", "greeting"] + tokens)
        #expect(stored.status == 0 && stored.stdout == "greeting\n", "\(stored.stderr)")
        let worker = try CLI.startCapturing(["worker", "--config", w.config])
        try await waitUntil(deadline: .seconds(60), "the scheduled send arrived") { w.receivedCount() >= 6 || !worker.isRunning }
        worker.terminate()
        try await worker.exited()
        w.stopSimulator()
        #expect(try BroadcastCommandTests.alertsByToken(w) == [
            World.token(0): ["|Guten Morgen"], World.token(1): ["|Guten Morgen"], World.token(2): ["|Bom dia"],
            World.token(3): ["|Good morning"], World.token(4): ["|Good morning"], World.token(5): ["|Good morning"],
        ])
    }

    @Test func badInputSendsNothing() async throws {
        var w = try await World.make(tokens: 1)
        defer { w.stop() }
        for args in [
            ["--token", "zz", "--alert", "x"],
            ["--alert", "x"],
            ["--all", "--token", World.token(0), "--alert", "x"],
            ["--all", "--silent", "--priority", "10"],
        ] {
            let r = try await CLI.run(["send", "--config", w.config, "--app", "example"] + args)
            #expect(r.status == 2, "\(args)")
            #expect(r.stderr.split(separator: "\n").count == 1, "\(args): \(r.stderr)")
        }
        let unknownApp = try await CLI.run(["send", "--config", w.config, "--app", "nope", "--all", "--alert", "x"])
        #expect(unknownApp.status == 2)
        #expect(try w.received().isEmpty)
    }

    @Test func apnsUnreachablePastTheOutageLimitExitsFiveNamingTheOutage() async throws {
        var w = try await World.make(tokens: 2, startSimulator: false)
        defer { w.stop() }
        let r = try await CLI.run(["send", "--config", w.config, "--app", "example", "--all", "--alert", "x", "--outage-limit", "1"])
        #expect(r.status == 5, "\(r.stdout)\(r.stderr)")
        #expect(r.stderr.contains("unreachable"))
        #expect(r.stderr.contains("2 notifications not sent"))
        #expect(!r.stderr.contains("credentials"))
    }

    @Test func anEndpointThatNeverAnswersStopsAtTheOutageLimitNamingTheTimeoutNotTheCertificate() async throws {
        // TCP is accepted, the TLS handshake never answered: each connect attempt times out.
        var w = try await World.make(tokens: 1, simulatorArgs: ["--black-hole"])
        defer { w.stop() }
        let started = Date()
        let r = try await CLI.run(["send", "--config", w.config, "--app", "example", "--all", "--alert", "x", "--outage-limit", "5"])
        let seconds = Date().timeIntervalSince(started)
        #expect(r.status == 5, "\(r.stdout)\(r.stderr)")
        #expect(seconds < 16, "took \(seconds) s for an outage limit of 5 s (it took 20 s when the limit waited for two 10 s connect timeouts; a loaded parallel run measured 12.7 s for the right behaviour)")
        // 5 s, or a second more when the machine is loaded (the limit is checked when a connect attempt fails).
        #expect(r.stderr.contains("unreachable for 5 s (outage limit 5 s)") || r.stderr.contains("unreachable for 6 s (outage limit 5 s)"),
                "\(r.stderr)")
        #expect(!r.stderr.contains("certificate"), "\(r.stderr)")
    }

    @Test func refusedCredentialsExitThree() async throws {
        // The dev certificate is for the development environment; a production simulator refuses it.
        var w = try await World.make(tokens: 2, simulatorArgs: ["--environment", "production"])
        defer { w.stop() }
        let r = try await CLI.run(["send", "--config", w.config, "--app", "example", "--all", "--alert", "x"])
        #expect(r.status == 3, "\(r.stdout)\(r.stderr)")
        #expect(r.stderr.contains("BadCertificateEnvironment") || r.stdout.contains("BadCertificateEnvironment"))
        #expect(try w.received().isEmpty)
    }
}
