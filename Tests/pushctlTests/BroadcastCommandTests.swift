import Foundation
import PushCore
import TestSupport
import PushStore
import Testing

/// `pushctl broadcast` as cron runs it: real processes, a real simulator process, a real database file.
@Suite(.timeLimit(.minutes(4))) struct BroadcastCommandTests {
    struct World {
        /// The 429 and 503 answers the fault suites inject, 1% each. A delivery is deferred after five answered attempts
        /// (`SenderConfiguration.maxAttempts`), so one that draws a fault five times in a row is deferred, and the
        /// suites' exact counts fail: at 2.5% each that is 0.049⁵ ≈ 3·10⁻⁷ per delivery, about one CI run in 400 over
        /// the suites' ~12,000 deliveries (seen once, 2026-12-04: a 429 five times); at 1% it is 0.02⁵ ≈ 3·10⁻⁹, one in
        /// ~25,000, and each run still draws some 100 faults of each kind, which the suites check were retried.
        static let retryFaults = ["--fraction-429", "0.01", "--fraction-503", "0.01"]

        let dir: URL
        let config: String
        let database: String
        let record: String
        let simulatorArgs: [String]
        let port: Int
        var simulator: ChildProcess?

        static func make(
            tokens: Int, delayMs: Int = 0, simulatorArgs: [String] = [], devices: String? = nil, startSimulator: Bool = true,
            database: String = "registry.sqlite", shardSize: Int? = nil, tokenAuth: Bool = false, extraConfig: String = "",
            webPush: Bool = false, fcm: FCMSetup? = nil, apns: APNsForm = .flat, hms: HMSSetup? = nil, unifiedPush: Bool = false,
            harmonyos: HarmonyOSSetup? = nil
        ) async throws -> World {
            let dir = try CLI.temporaryDirectory()
            let certs = dir.appendingPathComponent("certs").path
            let made = try await CLI.run(["cert", "make-dev", "--out", certs, "--topic", "com.example.app"])
            guard made.status == 0 else { throw Failure(made.stderr) }
            if webPush || unifiedPush {
                let key = try await CLI.run(["webpush", "key", "new", "--out", dir.appendingPathComponent("vapid.pem").path])
                guard key.status == 0 else { throw Failure(key.stderr) }
                // The applicationServerKey it printed, for subscribing.
                try key.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
                    .write(to: dir.appendingPathComponent("vapid.pub"), atomically: true, encoding: .utf8)
            }
            // An app with Web Push too: its VAPID key, the simulator's Web Push service allowed, its CA trusted.
            func webPushConfig(port: Int) -> String {
                webPush
                    ? #", "webpush": {"vapidKey": "vapid.pem", "subject": "mailto:ops@example.com", "allowedHosts": ["127.0.0.1:\#(port)"], "caFile": "certs/ca.pem"}"#
                    : ""
            }
            // The app's APNs keys: flat (the older form), in an `apns` section, or none (a web-only or Android-only app).
            let auth = tokenAuth
                ? #"{"p8": "\#(apns.p8File)", "keyId": "DEVKEY1234", "teamId": "DEVTEAM123"}"#
                : #"{"p12": "certs/client.p12", "passwordFile": "certs/client.p12.password"}"#
            let apnsKeys = #""topic": "com.example.app", "endpoint": "simulator", "auth": \#(auth)"#
            let apnsConfig = switch apns {
            case .flat: apnsKeys
            case .section, .sectionWithKey: #""apns": {\#(apnsKeys)}"#
            case .none: ""
            }
            // An app with FCM too: the development service account the simulator writes at its first start
            // (`token_uri` its /token), named in the config once it exists (the config's files are read as it loads).
            let account = dir.appendingPathComponent("fcm-account.json").path
            func fcmConfig() -> String {
                fcm != nil && FileManager.default.fileExists(atPath: account)
                    ? #", "fcm": {"serviceAccount": "fcm-account.json", "endpoint": "simulator"}"#
                    : ""
            }
            if fcm != nil, case .none = apns {
                // An Android-only app has no other service to load before the account exists: make it now (the
                // simulator trusts an account that exists instead of writing one).
                let made = try await CLI.run(["fcm", "account", "new", "--out", account])
                guard made.status == 0 else { throw Failure(made.stderr) }
            }
            // An app with Huawei Push Kit too: its client secret in a file of its own (mode 0600), the simulator's
            // endpoint; the simulator trusts the credentials it reads from the same config.
            var hmsConfig = ""
            if hms != nil {
                let secret = dir.appendingPathComponent("hms-secret").path
                guard FileManager.default.createFile(
                    atPath: secret, contents: Data("dev-secret-\(UUID().uuidString)\n".utf8), attributes: [.posixPermissions: 0o600])
                else { throw Failure("cannot write \(secret)") }
                hmsConfig = #", "hms": {"clientId": "\#(HMSSetup.clientId)", "clientSecretFile": "hms-secret", "endpoint": "simulator", "defaultTitle": "Example"}"#
            }
            // An app with HarmonyOS Push Kit too: a development service-account key file (mode 0600) made before the
            // config names it, the simulator's endpoint; the simulator trusts the key file the same config names.
            var harmonyosConfig = ""
            if harmonyos != nil {
                let key = dir.appendingPathComponent("harmonyos-account.json").path
                let made = try await CLI.run(["harmonyos", "account", "new", "--out", key, "--project-id", HarmonyOSSetup.projectId])
                guard made.status == 0 else { throw Failure(made.stderr) }
                harmonyosConfig = #", "harmonyos": {"projectId": "\#(HarmonyOSSetup.projectId)", "serviceAccount": "harmonyos-account.json", "endpoint": "simulator", "category": "SUBSCRIPTION", "defaultTitle": "Example"}"#
            }
            // An app with UnifiedPush too: the VAPID key, 127.0.0.1 exempt from the address check (the tests'
            // distributors are simulators on this machine), their CA trusted.
            let unifiedPushConfig = unifiedPush
                ? #", "unifiedpush": {"vapidKey": "vapid.pem", "subject": "mailto:ops@example.com", "exemptHosts": ["127.0.0.1"], "caFile": "certs/ca.pem"}"#
                : ""
            let config = dir.appendingPathComponent("pushctl.json").path
            func writeConfig(port: Int) throws {
            try """
                {"database": "\(database)",\(shardSize.map { " \"shardSize\": \($0)," } ?? "") \(extraConfig)
                 "simulator": {"host": "127.0.0.1", "port": \(port), "certificates": "certs"},
                 "apps": {"example": {\(String((apnsConfig + webPushConfig(port: port) + fcmConfig() + hmsConfig + harmonyosConfig + unifiedPushConfig).trimmingPrefix(", ")))}}}
                """.write(toFile: config, atomically: true, encoding: .utf8)
            }
            var port = try freePort()
            try writeConfig(port: port)
            let list = (0..<tokens).map { i -> String in
                let d = String(i, radix: 16)
                return "cd" + String(repeating: "0", count: 62 - d.count) + d
            }.joined(separator: "\n")
            let imported = try await CLI.run(["tokens", "import", "--config", config, "--app", "example", "-"], stdin: list)
            guard imported.status == 0 else { throw Failure(imported.stderr) }
            let record = dir.appendingPathComponent("received.jsonl").path
            var args = ["simulator", "--config", config, "--record", record]
                + (tokenAuth ? ["--client-auth", "token"] : webPush || fcm != nil || hms != nil || harmonyos != nil ? ["--client-auth", "either"] : [])
                + simulatorArgs
            // The provider-token key the simulator checks, named here: the config's may name a file that is not there.
            if tokenAuth { args += ["--jwt-key", "DEVKEY1234:DEVTEAM123:" + dir.appendingPathComponent("certs/AuthKey_DEVKEY1234.p8").path] }
            if let fcm {
                let dead = dir.appendingPathComponent("fcm-unregistered.txt").path
                try fcm.unregistered.joined(separator: "\n").write(toFile: dead, atomically: true, encoding: .utf8)
                args += ["--fcm-service-account", account, "--access-token-lifetime", String(fcm.accessTokenLifetime), "--fcm-unregistered", dead]
            }
            if let hms {
                let invalid = dir.appendingPathComponent("hms-invalid.txt").path
                try hms.invalid.joined(separator: "\n").write(toFile: invalid, atomically: true, encoding: .utf8)
                args += ["--hms-invalid", invalid, "--hms-access-token-lifetime", String(hms.accessTokenLifetime),
                         "--fraction-hms-503", String(hms.flowControlFraction)]
                if let after = hms.expireTokensAfter { args += ["--hms-expire-tokens-after", String(after)] }
            }
            if let harmonyos {
                let invalid = dir.appendingPathComponent("harmonyos-invalid.txt").path
                try harmonyos.invalid.joined(separator: "\n").write(toFile: invalid, atomically: true, encoding: .utf8)
                args += ["--harmonyos-invalid", invalid]
            }
            if delayMs > 0 { args += ["--delay-ms", String(delayMs)] }
            if let devices {
                let file = dir.appendingPathComponent("devices.json").path
                try devices.write(toFile: file, atomically: true, encoding: .utf8)
                args += ["--devices", file]
            }
            // Another test's process can take the free port between freePort() and the simulator's bind (tests run in
            // parallel): then this simulator exits, and a client would reach the other one. Take another port.
            for attempt in 1...5 {
                var world = World(dir: dir, config: config, database: database, record: record, simulatorArgs: args, port: port)
                guard startSimulator else { return world }
                do {
                    try await world.startSimulator()
                    if fcm != nil { try writeConfig(port: port) }
                    return world
                } catch is PortTaken where attempt < 5 {
                    port = try freePort()
                    try writeConfig(port: port)
                }
            }
            throw Failure("no free port for the simulator")
        }

        /// How the app's APNs keys are written: flat at the app's top level (the older form), in an `apns` section, or
        /// not at all; `p8File` is the token key's path in the config (with `tokenAuth`).
        enum APNsForm {
            case flat, section, none
            /// A section whose .p8 is the given path (relative to the config), which may not exist.
            case sectionWithKey(String)
            var p8File: String {
                if case .sectionWithKey(let path) = self { return path }
                return "certs/AuthKey_DEVKEY1234.p8"
            }
        }

        /// The simulator's FCM side: registration tokens it answers 404 UNREGISTERED and its access tokens' lifetime.
        struct FCMSetup {
            var unregistered: [String] = []
            var accessTokenLifetime = 3599
        }

        /// The simulator's Push Kit side: tokens it answers 80300007, its access tokens' lifetime, the share of sends
        /// it answers 503 (flow control), and after how many accepted messages it expires every access token once.
        struct HMSSetup {
            static let clientId = "104000001"
            var invalid: [String] = []
            var accessTokenLifetime = 3600
            var flowControlFraction = 0.0
            var expireTokensAfter: Int?
        }

        /// The simulator's HarmonyOS side: the tokens its scenario API answers 80300007 (noRight).
        struct HarmonyOSSetup {
            static let projectId = "101234567890"
            var invalid: [String] = []
        }

        /// The simulator could not listen on its port (its process ended before saying it listens), with its output.
        struct PortTaken: Error, CustomStringConvertible {
            let description: String
        }

        /// Starts the simulator process (again), with its usual arguments plus `extra`, and waits until that process
        /// says it listens on `port` (a listener on the port alone could be another test's).
        mutating func startSimulator(_ extra: [String] = []) async throws {
            let log = dir.appendingPathComponent("simulator-\(UUID().uuidString).log")
            let process = try CLI.spawn(simulatorArgs + extra, stdoutPath: log.path, stderrPath: log.path)
            simulator = process
            let ready = "listening on https://127.0.0.1:\(port) "
            func listens() -> Bool { ((try? String(contentsOf: log, encoding: .utf8)) ?? "").contains(ready) }
            do {
                try await waitUntil(deadline: .seconds(60), "the simulator says it listens on port \(port), or ends") {
                    listens() || !process.isRunning
                }
            } catch is WaitTimedOut {
                throw Failure("the simulator did not listen on port \(port) within 60 s")
            }
            if listens() { return }
            simulator = nil
            throw PortTaken(description: "the simulator ended without listening: " + ((try? String(contentsOf: log, encoding: .utf8)) ?? ""))
        }

        /// The fault suites' kill -9 and resume: runs `args` (a `pushctl broadcast --id ID … --json`), kills it with
        /// SIGKILL once `killAt` of broadcast `id`'s devices are done, runs the same command again to the end and
        /// returns its summary, after checking it completed with exit 0.
        func killedAndResumed(
            _ args: [String], id: String, killAt: Int, registry: any RegistryStore, timeout: Double = 400
        ) async throws -> JSONValue {
            let first = try CLI.start(args)
            try await waitUntil(deadline: .seconds(180), "\(killAt) devices done") {
                if !first.isRunning { return true }
                return ((try? await registry.run({ try $0.broadcastCounts(id: id) }))?.done ?? 0) >= killAt
            }
            #expect(first.isRunning, "the broadcast ended before it could be killed")
            kill(first.processIdentifier, SIGKILL)
            try await first.exited()
            let second = try await CLI.run(args, timeout: timeout)
            #expect(second.status == 0, "\(second.stderr)")
            let summary = try JSONValue(parsing: second.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
            #expect(summary["state"]?.stringValue == "completed", "\(summary)")
            return summary
        }

        /// The registry the config names (SQLite file or PostgreSQL database), opened by the test.
        func openRegistry() throws -> any RegistryStore {
            if database.hasPrefix("postgres://") {
                return try PostgresRegistry(url: PostgresURL(parsing: database), password: nil, connections: 1)
            }
            return try SQLiteRegistry(path: dir.appendingPathComponent(database).path)
        }

        /// Stops the simulator process.
        mutating func stopSimulator() {
            simulator?.stop()
            simulator = nil
        }

        /// The simulator's record, one JSON object per accepted request.
        func records() throws -> [JSONValue] {
            try recordLines().map { try JSONValue(parsing: String($0)) }
        }

        /// The record's complete lines. Tests poll it while the simulator appends: a read can land in the middle of
        /// a write and end in half a line ("invalid JSON … unterminated string"), which the next poll reads whole.
        private func recordLines() -> [Substring] {
            let text = (try? String(contentsOfFile: record, encoding: .utf8)) ?? ""
            guard let end = text.lastIndex(of: "\n") else { return [] }
            return text[..<end].split(separator: "\n")
        }

        /// The n-th imported token (they are imported in this form).
        static func token(_ i: Int) -> String {
            let d = String(i, radix: 16)
            return "cd" + String(repeating: "0", count: 62 - d.count) + d
        }

        /// How many requests the simulator accepted so far: the record's complete lines, not parsed — tests poll this
        /// every 20 ms, and parsing 1,500 JSON lines each time (debug build) kept a cooperative thread busy.
        func receivedCount() -> Int {
            let text = (try? String(contentsOfFile: record, encoding: .utf8)) ?? ""
            return text.utf8.reduce(0) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
        }

        /// Device tokens in the simulator's record, one entry per accepted request.
        func received() throws -> [String] {
            try recordLines().map { line in try JSONValue(parsing: String(line))["token"]?.stringValue ?? "" }
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

    @Test func aSecondRunOfTheSameIdSharesTheShardsAndTakesOverWhenTheFirstIsInterrupted() async throws {
        var w = try await World.make(tokens: 1500, delayMs: 200, shardSize: 100)
        defer { w.stop() }
        let args = ["broadcast", "--config", w.config, "--app", "example", "--id", "slow", "--alert", "a", "--rate", "200"]
        let first = try CLI.start(args)
        try await waitUntil(deadline: .seconds(60), "the first run sending") { w.receivedCount() > 0 || !first.isRunning }
        // A second run of the same id (an overlapping cron run, or a second host) claims other shards…
        let second = try CLI.startCapturing(args + ["--json"])
        try await waitUntil(deadline: .seconds(60), "400 received") { w.receivedCount() >= 400 || !first.isRunning }
        first.interrupt()  // SIGINT: drain, give the shard back, exit 130
        try await first.exited()
        #expect(first.terminationStatus == 130)
        // …and finishes what the first gave back.
        try await second.exited()
        #expect(second.terminationStatus == 0, "\(second.stderrText)")
        let summary = try JSONValue(parsing: second.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(summary["state"]?.stringValue == "completed" && summary["accepted"] == .int(1500))
        let workers = try #require(summary["workers"]?.objectPairs)
        #expect(workers.count == 2)
        #expect(workers.reduce(0) { $0 + ($1.1.intValue ?? 0) } == 1500)
        var copies: [String: Int] = [:]
        for token in try w.received() { copies[token, default: 0] += 1 }
        #expect(copies.count == 1500)
        #expect(copies.values.allSatisfy { $0 == 1 })  // shards are exclusive and a graceful stop drains: nobody gets it twice
    }

    @Test func aDetachedBroadcastIsStartedForTheWorkersAndAWorkerSendsIt() async throws {
        var w = try await World.make(tokens: 300, shardSize: 100)
        defer { w.stop() }
        let started = try await CLI.run(["broadcast", "--config", w.config, "--app", "example", "--id", "later", "--alert", "a", "--detach"])
        #expect(started.status == 0, "\(started.stderr)")
        #expect(started.stdout == "later\n")
        #expect(started.stderr.contains("300 devices in 3 shards"))
        #expect(try w.received().isEmpty)
        let worker = try CLI.startCapturing(["worker", "--config", w.config, "--concurrency", "2"])
        try await waitUntil(deadline: .seconds(60), "300 received") { w.receivedCount() >= 300 || !worker.isRunning }
        let registry = try w.openRegistry()
        try await waitUntil(deadline: .seconds(60), "broadcast later completed") {
            try await registry.run({ try $0.broadcast(id: "later") })?.state == .completed
        }
        worker.terminate()  // SIGTERM: drain and exit 0
        try await worker.exited()
        #expect(worker.terminationStatus == 0, "\(worker.stderrText)")
        #expect(worker.stderrText.contains("worker stopped: 3 shards finished"))
        #expect(try await registry.run { try $0.broadcast(id: "later") }?.state == .completed)
        let received = try w.received()
        #expect(Set(received).count == 300 && received.count == 300)
        // Starting it again changes nothing.
        let again = try await CLI.run(["broadcast", "--config", w.config, "--app", "example", "--id", "later", "--alert", "a", "--detach"])
        #expect(again.status == 0 && again.stderr.contains("already completed"))
    }

    @Test func withAFailuresOnlyDeliveryLogTheHistoryHoldsTheDeadTokenAndTheSummaryStillCountsEveryDevice() async throws {
        let dead = World.token(7)
        var w = try await World.make(
            tokens: 40, devices: #"[{"token": "\#(dead)", "state": "unregistered"}]"#, extraConfig: #""deliveryLog": "failures","#)
        defer { w.stop() }
        let r = try await CLI.run(["broadcast", "--config", w.config, "--app", "example", "--id", "lean", "--alert", "a", "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        let summary = try JSONValue(parsing: r.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(summary["state"]?.stringValue == "completed")
        #expect(summary["accepted"] == .int(39) && summary["pruned"] == .int(1))
        #expect(try w.received().count == 39)
        func history(_ extra: [String]) async throws -> [JSONValue] {
            let h = try await CLI.run(["deliveries", "--config", w.config, "--app", "example", "--json"] + extra)
            #expect(h.status == 0, "\(h.stderr)")
            guard case .array(let items) = try JSONValue(parsing: Array(h.stdout.utf8)) else { return [] }
            return items
        }
        let rows = try await history(["--broadcast", "lean"])
        #expect(rows.count == 1)
        #expect(rows.first?["token"]?.stringValue == dead && rows.first?["status"]?.stringValue == "tokenDead")
        #expect(try await history(["--status", "accepted"]).isEmpty)
        // Asking for accepted rows says why there are none; other queries say nothing extra.
        let accepted = try await CLI.run(["deliveries", "--config", w.config, "--app", "example", "--status", "accepted"])
        #expect(accepted.status == 0 && accepted.stdout == "TIME  STATUS  REASON  TOKEN  APNS-ID  BROADCAST  SERVICE\n")
        #expect(accepted.stderr.contains("app example logs failures only (deliveryLog: failures)"))
        #expect(try await CLI.run(["deliveries", "--config", w.config, "--app", "example"]).stderr.isEmpty)
        // The accepted ones are still the broadcast's per-device outcomes: running the id again sends nothing.
        let again = try await CLI.run(["broadcast", "--config", w.config, "--app", "example", "--id", "lean", "--alert", "a", "--json"])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try w.received().count == 39)
    }

    /// Apple adds reasons: a 410 with one this version does not know is a dead token like Unregistered — pruned,
    /// counted as a dead token, and the broadcast succeeds.
    @Test func a410WithAReasonThisVersionDoesNotKnowPrunesTheTokenAndTheBroadcastSucceeds() async throws {
        let inactive = stride(from: 5, to: 200, by: 20).map(World.token)  // 10 of the 200
        let devices = inactive.map { #"{"token": "\#($0)", "state": "answer", "status": 410, "reason": "TokenInactive"}"# }
        var w = try await World.make(tokens: 200, devices: "[" + devices.joined(separator: ",") + "]")
        defer { w.stop() }
        let r = try await CLI.run(["broadcast", "--config", w.config, "--app", "example", "--id", "inactive", "--alert", "a", "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        let summary = try JSONValue(parsing: r.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(summary["state"]?.stringValue == "completed")
        #expect(summary["accepted"] == .int(190) && summary["tokenDead"] == .int(10) && summary["pruned"] == .int(10))
        #expect(try w.received().count == 190)
        let registry = try w.openRegistry()
        let kept = Set(try await registry.run { try $0.list(app: "example").map(\.token.hex) })
        #expect(kept.count == 190 && kept.isDisjoint(with: inactive))
        // The prune log keeps the reason APNs sent.
        let log = try await registry.run { try $0.pruneLog(app: "example", limit: 20) }
        #expect(log.count == 10 && log.allSatisfy { $0.reason == "TokenInactive" && $0.outcome == .deleted })
    }

    @Test func anAlreadyCompletedIdPrintsItsSummaryAndSendsNothing() async throws {
        var w = try await World.make(tokens: 5)
        defer { w.stop() }
        let args = ["broadcast", "--config", w.config, "--app", "example", "--id", "done", "--alert", "a", "--json"]
        #expect(try await CLI.run(args).status == 0)
        let again = try await CLI.run(args)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stderr.contains("broadcast done already completed; nothing sent"))
        // A cron script parsing the summary gets it, with nothing sent this time.
        let summary = try JSONValue(parsing: again.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(summary["id"]?.stringValue == "done" && summary["state"]?.stringValue == "completed")
        #expect(summary["accepted"] == .int(5) && summary["sentThisRun"] == .int(0))
        #expect(try w.received().count == 5)
    }

    /// Devices of five locales for the per-locale tests: de-DE and de-AT (German by their language), pt-BR, pt-PT
    /// (no `pt` text: the default), en-US, and one without a locale.
    static let localeDevices: [(token: String, locale: String?)] = [
        (World.token(0), "de-DE"), (World.token(1), "de-AT"), (World.token(2), "pt-BR"), (World.token(3), "pt-PT"),
        (World.token(4), "en-US"), (World.token(5), nil),
    ]

    static func importLocaleDevices(_ w: World) async throws {
        let lines = localeDevices.map { device in
            #"{"token":"\#(device.token)"\#(device.locale.map { #","locale":"\#($0)""# } ?? "")}"#
        }.joined(separator: "\n")
        let imported = try await CLI.run(["tokens", "import", "--config", w.config, "--app", "example", "--format", "jsonl", "-"], stdin: lines + "\n")
        guard imported.status == 0 else { throw Failure(imported.stderr) }
    }

    /// What each device's recorded notifications say: token → ["title|body"].
    static func alertsByToken(_ w: World) throws -> [String: [String]] {
        var out: [String: [String]] = [:]
        for record in try w.records() {
            guard let token = record["token"]?.stringValue, let alert = record["payload"]?["aps"]?["alert"] else { continue }
            let body = alert.stringValue ?? alert["body"]?.stringValue ?? ""
            out[token, default: []].append((alert["title"]?.stringValue ?? "") + "|" + body)
        }
        return out
    }

    /// `--alert-for LOCALE=TEXT` (and `--title-for`) is the API's per-locale text: each device gets its locale's text,
    /// else its language's, else the default (--alert, --title).
    @Test func aBroadcastWithPerLocaleTextGivesEachDeviceItsLanguageAndTheOthersTheDefault() async throws {
        var w = try await World.make(tokens: 0)
        defer { w.stop() }
        try await Self.importLocaleDevices(w)
        let r = try await CLI.run(["broadcast", "--config", w.config, "--app", "example", "--id", "morning",
                                   "--title", "Hello", "--title-for", "de=Hallo", "--alert", "Good morning",
                                   "--alert-for", "de=Guten Morgen", "--alert-for", "pt-BR=Bom dia", "--alert-for", "de-AT=Servus"])
        #expect(r.status == 0, "\(r.stderr)")
        w.stopSimulator()  // flushes the record
        #expect(try Self.alertsByToken(w) == [
            World.token(0): ["Hallo|Guten Morgen"], World.token(1): ["Hallo|Servus"], World.token(2): ["Hello|Bom dia"],
            World.token(3): ["Hello|Good morning"], World.token(4): ["Hello|Good morning"], World.token(5): ["Hello|Good morning"],
        ])
        // --dry-run shows the default payload and each locale's.
        let dry = try await CLI.run(["broadcast", "--config", w.config, "--app", "example", "--alert", "Hi", "--alert-for", "de=Hallo", "--dry-run"])
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(dry.stdout.hasPrefix(#"{"aps":{"alert":"Hi"}}"#) && dry.stdout.contains(#"locale de: {"aps":{"alert":"Hallo"}}"#), "\(dry.stdout)")
    }

    /// Bad per-locale flags are exit 2 with one line naming the flag (the API's rule: canonical locales, a default,
    /// at most 20 entries), and nothing is stored or sent.
    @Test func badPerLocaleFlagsExitTwoWithOneLineAndSendNothing() async throws {
        var w = try await World.make(tokens: 2)
        defer { w.stop() }
        let base = ["broadcast", "--config", w.config, "--app", "example", "--id", "bad"]
        let cases: [([String], String)] = [
            (["--alert", "Hi", "--alert-for", "de"], "--alert-for takes LOCALE=TEXT"),
            (["--alert", "Hi", "--alert-for", "=Hallo"], "--alert-for takes LOCALE=TEXT"),
            (["--alert", "Hi", "--alert-for", "de_DE=Hallo"], "--alert-for: 'de_DE' is not a BCP 47 locale in canonical form"),
            (["--alert", "Hi", "--alert-for", "DE=Hallo"], "--alert-for: 'DE' is not a BCP 47 locale in canonical form"),
            (["--alert-for", "de=Hallo"], "--alert-for needs --alert"),
            (["--alert", "Hi", "--alert-for", "de=Hallo", "--alert-for", "de=Moin"], "--alert-for: 'de' is given twice"),
            (["--alert", "Hi", "--alert-for", "default=Hallo"], "--alert-for: the default text is --alert's"),
            (["--alert", "Hi", "--subtitle-for", "de=Hallo"], "--subtitle-for needs --subtitle"),
            (["--alert", "Hi"] + (0..<20).flatMap { ["--alert-for", "x\(String(UnicodeScalar(UInt8(97 + $0))))=t"] }, "at most 20 entries"),
            (["--silent", "--alert", "Hi", "--alert-for", "de=Hallo"], "--silent sends only content-available"),
        ]
        for (flags, message) in cases {
            let r = try await CLI.run(base + flags)
            #expect(r.status == 2 && r.stderr.contains(message), "\(flags): \(r.status) \(r.stderr)")
            #expect(r.stderr.split(separator: "\n").count == 1, "\(flags): \(r.stderr)")
        }
        let jobs = try await CLI.run(["jobs", "list", "--config", w.config, "--app", "example"])
        #expect(!jobs.stdout.contains("bad"), "\(jobs.stdout)")
        #expect(try w.received().isEmpty)
    }

    @Test func dryRunShowsWhatADeviceOfEachOfTheAppsServicesWouldGetPerLocale() async throws {
        var w = try await World.make(tokens: 3, webPush: true, fcm: .init(), unifiedPush: true)
        defer { w.stop() }
        let r = try await CLI.run([
            "broadcast", "--config", w.config, "--app", "example", "--title", "Hi", "--alert", "Hello", "--alert-for", "de=Hallo",
            "--dry-run",
        ])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        // APNs' lines as before, then the browser's plaintext and the Android message, each per locale.
        #expect(lines.first?.hasPrefix(#"{"aps":{"alert":{"title":"Hi","body":"Hello"}}"#) == true, "\(r.stdout)")
        #expect(lines.contains("apns-topic: com.example.app"), "\(r.stdout)")
        let web = try #require(lines.first { $0.hasPrefix("webpush: ") }, "\(r.stdout)")
        #expect(web.contains(#""title":"Hi","body":"Hello""#) && web.hasSuffix(" bytes, serviceWorker)"), "\(web)")
        let fcm = try #require(lines.first { $0.hasPrefix("fcm: ") }, "\(r.stdout)")
        #expect(fcm.hasPrefix(#"fcm: {"message":{"token":"DEVICE_REGISTRATION_TOKEN","notification":{"title":"Hi","body":"Hello"}"#), "\(fcm)")
        #expect(lines.contains { $0.hasPrefix("webpush locale de: ") && $0.contains(#""body":"Hallo""#) }, "\(r.stdout)")
        #expect(lines.contains { $0.hasPrefix("fcm locale de: ") && $0.contains(#""body":"Hallo""#) }, "\(r.stdout)")
        let up = try #require(lines.first { $0.hasPrefix("unifiedpush: ") }, "\(r.stdout)")
        #expect(up.hasPrefix(#"unifiedpush: {"id":"00000000-0000-0000-0000-000000000000","title":"Hi","body":"Hello""#), "\(up)")
        #expect(lines.contains { $0.hasPrefix("unifiedpush locale de: ") && $0.contains(#""body":"Hallo""#) }, "\(r.stdout)")
        #expect(lines.last == "devices: 3", "\(r.stdout)")
        #expect(try w.received().isEmpty)
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
