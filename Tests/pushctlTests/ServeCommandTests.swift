import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import PushCore
import Testing
import TestSupport

/// `pushctl serve` as `make run` starts it: the HTTP API and the built-in simulator in one process.
@Suite(.timeLimit(.minutes(2))) struct ServeCommandTests {
    typealias World = BroadcastCommandTests.World

    /// A configuration like the shipped one: `example` on the development certificate (.p12) and `example-live` on
    /// the development key (.p8), both on the built-in simulator at `simulatorPort`.
    static func sideBySideConfig(in w: World, simulatorPort: Int) throws -> String {
        let path = w.dir.appendingPathComponent("serve.json").path
        try """
            {"database": "registry.sqlite",
             "simulator": {"host": "127.0.0.1", "port": \(simulatorPort), "certificates": "certs"},
             "apps": {
               "example": {"topic": "com.example.app", "endpoint": "simulator",
                           "auth": {"p12": "certs/client.p12", "passwordFile": "certs/client.p12.password"}},
               "example-live": {"topic": "com.example.app", "endpoint": "simulator",
                                "auth": {"p8": "certs/AuthKey_DEVKEY1234.p8", "keyId": "DEVKEY1234", "teamId": "DEVTEAM123"}}}}
            """.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Starts `pushctl serve` and waits for its banner; returns it with the banner's development key per app.
    static func startServe(config: String, port: Int, extra: [String] = []) async throws -> (CLI.Background, [String: String]) {
        let serve = try CLI.startCapturing(["serve", "--config", config, "--port", String(port)] + extra)
        try await waitUntil(deadline: .seconds(60), "serve's banner") {
            !serve.isRunning || serve.stdoutText.contains("Send it a notification")
        }
        var keys: [String: String] = [:]
        let lines = serve.stdoutText.split(separator: "\n").map(String.init)
        for (i, line) in lines.enumerated() where line.hasPrefix("App '") && i + 1 < lines.count {
            let app = String(line.dropFirst(5).prefix { $0 != "'" })
            keys[app] = lines[i + 1].trimmingCharacters(in: .whitespaces)
        }
        return (serve, keys)
    }

    @Test func serveTakesCertificateAndTokenAppsSideBySideSoLiveActivitiesWorkUnderIt() async throws {
        var w = try await World.make(tokens: 1, startSimulator: false)
        defer { w.stop() }
        // The clients below reach serve's simulator and API on ports in the configuration, chosen free beforehand:
        // another test's process can take one first (tests run in parallel); then serve exits, and this takes others.
        var config = "", httpPort = 0
        var serve: CLI.Background?, keys: [String: String] = [:]
        for attempt in 1...5 {
            config = try Self.sideBySideConfig(in: w, simulatorPort: attempt == 1 ? w.port : try BroadcastCommandTests.freePort())
            httpPort = try BroadcastCommandTests.freePort()
            (serve, keys) = try await Self.startServe(config: config, port: httpPort, extra: ["--admin-port", "0"])
            guard let started = serve, !started.isRunning, started.stderrText.contains("Address already in use") else { break }
        }
        let served = try #require(serve)
        defer { served.stop() }
        let key = try #require(keys["example-live"], "\(served.stdoutText)\(served.stderrText)")

        // A Live Activity start to a push-to-start token, through the built-in simulator (token authentication).
        let token = String(repeating: "a1", count: 32)
        var r = try await CLI.run(["live-activity", "tokens", "register", "--config", config, "--app", "example-live",
                                   "--kind", "push-to-start", token, "--installation", "inst-1", "--attributes-type", "ScoreAttributes"])
        #expect(r.status == 0, "\(r.stderr)")
        r = try await CLI.run(["live-activity", "start", "--config", config, "--app", "example-live", "--attributes-type", "ScoreAttributes",
                               "--attributes", #"{"home":"Lions"}"#, "--content-state", #"{"score":"0-0"}"#, "--title", "Kick-off",
                               "--alert", "Lions v Bears"])
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
        #expect(r.stdout.contains(" 200 "), "\(r.stdout)")

        // A broadcast channel over the HTTP API.
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(httpPort)/v1/apps/example-live/broadcast-channels")!)
        request.httpMethod = "POST"
        request.setValue("Bearer \(key)", forHTTPHeaderField: "Authorization")
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(#"{"storagePolicy":"most-recent","label":"Lions v Bears"}"#.utf8)
        let (body, response) = try await URLSession.shared.answer(for: request)
        #expect(response.statusCode == 201, "\(String(decoding: body, as: UTF8.self))")

        // The certificate app beside it still sends.
        r = try await CLI.run(["send", "--config", config, "--app", "example", "--token", World.token(0), "--alert", "hi"])
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
    }

    @Test func onPort0TheBannerNamesThePortsTheListenersGotAndTheServerAnswersThere() async throws {
        var w = try await World.make(tokens: 0, startSimulator: false)
        defer { w.stop() }
        // Port 0 everywhere: the API and admin on one listener, and the built-in simulator.
        let config = try Self.sideBySideConfig(in: w, simulatorPort: 0)
        var (serve, _) = try await Self.startServe(config: config, port: 0, extra: ["--admin-port", "0"])
        var banner = serve.stdoutText
        let oneListener = try Self.bannerPort(banner, after: "PushProvider is listening on http://127.0.0.1:")
        #expect(banner.contains("(API, admin and console on one listener)"), "\(banner)")
        #expect(banner.contains("curl -s http://127.0.0.1:\(oneListener)/healthz\n"), "\(banner)")
        #expect(banner.contains("curl -s http://127.0.0.1:\(oneListener)/metrics\n"), "\(banner)")
        let simulator = try Self.bannerPort(banner, after: "simulator: https://127.0.0.1:")
        // Each service the simulator plays for this configuration, with its address and its apps: APNs only here.
        #expect(banner.contains("    APNs      https://127.0.0.1:\(simulator)/3/device/<token>  for example, example-live\n"), "\(banner)")
        #expect(!banner.contains("Web Push  https://") && !banner.contains("FCM       https://"), "\(banner)")
        #expect(try await Self.status(of: "http://127.0.0.1:\(oneListener)/metrics") == 200, "the admin routes are on it")
        serve.terminate()
        try await serve.exited()

        // Two listeners (the admin one on another loopback address), both on port 0: each named with its own port.
        (serve, _) = try await Self.startServe(config: config, port: 0, extra: ["--admin-host", "127.0.0.2", "--admin-port", "0"])
        defer { serve.stop() }
        banner = serve.stdoutText
        let api = try Self.bannerPort(banner, after: "PushProvider is listening on http://127.0.0.1:")
        let admin = try Self.bannerPort(banner, after: "(API), admin on http://127.0.0.2:")
        #expect(banner.contains("curl -s http://127.0.0.2:\(admin)/metrics\n"), "\(banner)")
        #expect([200, 503].contains(try await Self.status(of: "http://127.0.0.1:\(api)/healthz")), "/healthz answers there")
        #expect(try await Self.status(of: "http://127.0.0.1:\(api)/metrics") == 404, "the public listener has no admin routes")
        #expect(try await Self.status(of: "http://127.0.0.2:\(admin)/metrics") == 200)
    }

    /// The port a banner names right after `prefix` (a test failure when there is none, or it is 0).
    static func bannerPort(_ banner: String, after prefix: String) throws -> Int {
        let start = try #require(banner.range(of: prefix), "no '\(prefix)' in: \(banner)")
        let port = try #require(Int(banner[start.upperBound...].prefix { $0.isNumber }), "\(banner)")
        #expect(port != 0, "\(banner)")
        return port
    }

    /// The status of a GET.
    static func status(of url: String) async throws -> Int? {
        let (_, response) = try await URLSession.shared.answer(from: URL(string: url)!)
        return response.statusCode
    }

    @Test func aPortInUseIsOneLineNamingTheAddressAndNoBannerClaimsIt() async throws {
        var w = try await World.make(tokens: 0)  // its simulator process holds w.port
        defer { w.stop() }
        // The API's port is taken.
        let free = try BroadcastCommandTests.freePort()
        let config = try Self.sideBySideConfig(in: w, simulatorPort: free)
        var r = try await CLI.run(["serve", "--config", config, "--port", String(w.port)])
        #expect(r.status == 1)
        #expect(r.stderr.hasSuffix("\npushctl: cannot listen on 127.0.0.1:\(w.port): Address already in use (errno 98)\n"), "\(r.stderr)")
        #expect(!r.stdout.contains("PushProvider is listening"), "\(r.stdout)")
        // The built-in simulator's port is taken.
        let taken = try Self.sideBySideConfig(in: w, simulatorPort: w.port)
        r = try await CLI.run(["serve", "--config", taken, "--port", String(try BroadcastCommandTests.freePort())])
        #expect(r.status == 1)
        #expect(r.stderr.hasSuffix("pushctl: cannot start the simulator: cannot listen on 127.0.0.1:\(w.port): Address already in use (errno 98)\n"), "\(r.stderr)")
        #expect(!r.stdout.contains("PushProvider is listening"), "\(r.stdout)")
    }

    /// One HTTP call to serve; the status and the JSON body.
    static func call(_ method: String, _ url: String, key: String, form: String? = nil, json: String? = nil) async throws -> (Int, JSONValue?) {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = method
        request.setValue("Bearer \(key)", forHTTPHeaderField: "Authorization")
        if let form { request.httpBody = Data(form.utf8) }
        if let json {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = Data(json.utf8)
        }
        let (body, response) = try await URLSession.shared.answer(for: request)
        return (response.statusCode, body.isEmpty ? nil : try? JSONValue(parsing: Array(body)))
    }

    @Test func theDevelopmentInboxShowsWhatTheBuiltInSimulatorAcceptedAndClearHidesItAndTheRecordFileHasEveryLine() async throws {
        var w = try await World.make(tokens: 0, startSimulator: false)
        defer { w.stop() }
        let record = w.dir.appendingPathComponent("inbox-record.jsonl").path
        // The senders reach the simulator at the configuration's port, so it is a real one, chosen free beforehand
        // (another test's process can take it first: then serve exits, and this takes another).
        var started: CLI.Background?, keys: [String: String] = [:]
        for _ in 1...5 {
            let config = try Self.sideBySideConfig(in: w, simulatorPort: try BroadcastCommandTests.freePort())
            (started, keys) = try await Self.startServe(config: config, port: 0, extra: ["--admin-port", "0", "--simulator-record", record])
            guard let s = started, !s.isRunning, s.stderrText.contains("Address already in use") else { break }
        }
        let serve = try #require(started)
        defer { serve.stop() }
        let banner = serve.stdoutText
        let api = "http://127.0.0.1:\(try Self.bannerPort(banner, after: "PushProvider is listening on http://127.0.0.1:"))"
        let key = try #require(keys["example"], "\(banner)")
        let token = String(repeating: "5e", count: 32)
        var (status, body) = try await Self.call("POST", "\(api)/v1/apps/example/devices", key: key, form: "oldToken=(null)&newToken=\(token)")
        #expect(status == 201, "\(String(describing: body))")

        func inbox(_ query: String = "") async throws -> [JSONValue] {
            let (status, body) = try await Self.call("GET", "\(api)/v1/apps/example/inbox\(query)", key: key)
            #expect(status == 200, "\(String(describing: body))")
            #expect(body?["capacity"] == JSONValue.int(1000))
            return body?["entries"]?.arrayValue ?? []
        }
        func send(_ text: String) async throws {
            let (status, body) = try await Self.call("POST", "\(api)/v1/apps/example/notifications", key: key, json: #"{"alert":"\#(text)","all":true}"#)
            #expect(status == 202, "\(String(describing: body))")
            try await waitUntil(deadline: .seconds(60), "the simulator accepted \(text)") {
                try await inbox().contains { $0["content"]?["aps"]?["alert"]?.stringValue == text }
            }
        }
        try await send("Inbox one")
        var entries = try await inbox()
        #expect(entries.count == 1, "\(entries)")
        let first = try #require(entries.first)
        #expect(first["service"] == .string("apns") && first["device"] == .string(token))
        #expect(first["content"] == (try JSONValue(parsing: Array(#"{"aps":{"alert":"Inbox one"}}"#.utf8))))
        #expect(first["record"]?["topic"] == .string("com.example.app") && first["record"]?["service"] == .string("apns"))
        #expect(try await inbox("?service=webpush").isEmpty)
        #expect(try await inbox("?device=\(String(repeating: "00", count: 32))").isEmpty)
        #expect(try await inbox("?device=\(token)").count == 1)
        (status, body) = try await Self.call("GET", "\(api)/v1/apps/example/inbox?service=sms", key: key)
        #expect(status == 400 && body?["error"]?["code"] == JSONValue.string("invalid_service"), "\(String(describing: body))")

        // Clear hides what came so far; what comes next is shown.
        (status, _) = try await Self.call("DELETE", "\(api)/v1/apps/example/inbox", key: key)
        #expect(status == 204)
        #expect(try await inbox().isEmpty)
        try await send("Inbox two")
        entries = try await inbox()
        #expect(entries.map { $0["content"]?["aps"]?["alert"]?.stringValue } == ["Inbox two"], "\(entries)")

        // The record file: the same objects, one a line, every one kept (Clear is the inbox's, not the file's).
        serve.terminate()
        try await serve.exited()
        let lines = try String(contentsOfFile: record, encoding: .utf8).split(separator: "\n").map { try JSONValue(parsing: Array($0.utf8)) }
        #expect(lines.map { $0["payload"]?["aps"]?["alert"]?.stringValue } == ["Inbox one", "Inbox two"], "\(lines)")
        #expect(lines.allSatisfy { $0["service"] == .string("apns") && $0["token"] == .string(token) })
    }

    @Test func healthDetailsShowEachServicesCredentialsAndAReloadThatLosesTheFCMAccountDegradesTheApp() async throws {
        var w = try await World.make(tokens: 0, startSimulator: false)
        defer { w.stop() }
        let dir = w.dir.path
        let made = try await CLI.run(["webpush", "key", "new", "--out", dir + "/vapid.pem"])
        #expect(made.status == 0, "\(made.stderr)")
        let publicKey = made.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let account = try await CLI.run(["fcm", "account", "new", "--out", dir + "/fcm.json"])
        #expect(account.status == 0, "\(account.stderr)")
        let config = dir + "/health.json"
        try #"""
            {"database": "registry.sqlite", "server": {"host": "127.0.0.1", "port": 0},
             "apps": {"web": {"webpush": {"vapidKey": "vapid.pem", "subject": "mailto:ops@example.com"},
                              "fcm": {"serviceAccount": "fcm.json"},
                              "sendKeys": ["sha256:0000000000000000000000000000000000000000000000000000000000000000"]},
                      "android": {"unifiedpush": {"vapidKey": "vapid.pem", "subject": "mailto:ops@example.com",
                                                  "exemptHosts": ["ntfy.internal", "10.1.0.0/16"]},
                                  "sendKeys": ["sha256:1111111111111111111111111111111111111111111111111111111111111111"]}}}
            """#.write(toFile: config, atomically: true, encoding: .utf8)
        let serve = try CLI.startCapturing(["serve", "--config", config, "--port", "0", "--admin-port", "0"])
        defer { serve.stop() }
        try await waitUntil(deadline: .seconds(60), "serve listening") { !serve.isRunning || serve.stdoutText.contains("PushProvider is listening") }
        let admin = try Self.bannerPort(serve.stdoutText, after: "PushProvider is listening on http://127.0.0.1:")  // one listener on port 0
        func details() async throws -> (Int, JSONValue) {
            let (body, response) = try await URLSession.shared.answer(from: URL(string: "http://127.0.0.1:\(admin)/healthz/details")!)
            return (response.statusCode, try JSONValue(parsing: Array(body)))
        }
        var (status, health) = try await details()
        #expect(status == 200, "\(health)")
        let web = try #require(health["apps"]?["web"], "\(health)")
        #expect(web["services"] == .array([.string("webpush"), .string("fcm")]))
        #expect(web["webpush"]?["loaded"] == .bool(true) && web["webpush"]?["publicKey"] == .string(publicKey), "\(web)")
        #expect(web["webpush"]?["subject"] == .string("mailto:ops@example.com"))
        #expect(web["fcm"]?["loaded"] == .bool(true) && web["fcm"]?["project"]?.stringValue?.isEmpty == false, "\(web)")
        #expect(web["fcm"]?["endpoint"] == .string("production"))
        #expect(web["endpoint"] == nil && web["credentials"] == nil, "no APNs fields for an app without APNs")
        // UnifiedPush: its key (the vapid its apps hand their distributor), subject and exempt hosts; no distributor probed.
        #expect(health["apps"]?["android"] == .object([
            ("services", .array([.string("unifiedpush")])),
            ("unifiedpush", .object([
                ("loaded", .bool(true)), ("publicKey", .string(publicKey)), ("subject", .string("mailto:ops@example.com")),
                ("exemptHosts", .array([.string("ntfy.internal"), .string("10.1.0.0/16")])),
            ])),
        ]), "\(health)")

        // The account file goes away; a reload reads the services' credentials again: FCM not loaded, degraded.
        try FileManager.default.removeItem(atPath: dir + "/fcm.json")
        kill(serve.process.processIdentifier, SIGHUP)
        try await waitUntil(deadline: .seconds(30), "the reload") { serve.stderrText.contains("configuration reloaded from") }
        (status, health) = try await details()
        #expect(status == 503 && health["status"] == .string("degraded"), "\(health)")
        #expect(health["apps"]?["web"]?["fcm"]?["loaded"] == .bool(false), "\(health)")
        #expect(health["apps"]?["web"]?["fcm"]?["error"]?.stringValue?.contains("fcm.json") == true, "\(health)")
        #expect(health["apps"]?["web"]?["webpush"]?["loaded"] == .bool(true))
        #expect(serve.stderrText.contains("app web: fcm credentials not loaded"), "\(serve.stderrText)")
    }

    @Test func aReloadThatGivesTheAppKeysSaysThePrintedDevelopmentKeyStoppedWorkingAndWhenNoSendKeyIsLeft() async throws {
        var w = try await World.make(tokens: 0, startSimulator: false)
        defer { w.stop() }
        var started: CLI.Background?, keys: [String: String] = [:], config = ""
        for _ in 1...5 {
            config = try Self.sideBySideConfig(in: w, simulatorPort: try BroadcastCommandTests.freePort())
            (started, keys) = try await Self.startServe(config: config, port: 0)
            guard let s = started, !s.isRunning, s.stderrText.contains("Address already in use") else { break }
        }
        let serve = try #require(started)
        defer { serve.stop() }
        let key = try #require(keys["example"], "\(serve.stdoutText)")
        let port = try Self.bannerPort(serve.stdoutText, after: "PushProvider is listening on http://127.0.0.1:")
        func count() async throws -> Int {
            try await Self.call("GET", "http://127.0.0.1:\(port)/v1/apps/example/devices/count", key: key).0
        }
        #expect(try await count() == 200)
        // Only a registration key for "example": the printed send key stops, and nothing can send.
        let text = try String(contentsOfFile: config, encoding: .utf8).replacingOccurrences(
            of: #""example": {"#, with: #""example": {"registrationKeys": ["sha256:\#(String(repeating: "0", count: 64))"], "#)
        try text.write(toFile: config, atomically: true, encoding: .utf8)
        kill(serve.process.processIdentifier, SIGHUP)
        try await waitUntil(deadline: .seconds(30), "the reload") { serve.stderrText.contains("configuration reloaded from") }
        #expect(try await count() == 401)
        let lines = serve.stderrText.split(separator: "\n").filter { $0.contains("the development key printed at start no longer works") }
        #expect(lines.count == 1 && lines.first?.contains("app example:") == true, "\(serve.stderrText)")
        #expect(lines.first?.contains("none of them is a send key (add one to apps.example.sendKeys to send)") == true, "\(serve.stderrText)")
        // Another reload of the same file says nothing again.
        kill(serve.process.processIdentifier, SIGHUP)
        try await waitUntil(deadline: .seconds(30), "the second reload") {
            serve.stderrText.components(separatedBy: "configuration reloaded from").count == 3
        }
        #expect(serve.stderrText.components(separatedBy: "no longer works").count == 2, "\(serve.stderrText)")
    }
}
