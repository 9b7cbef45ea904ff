import Foundation
import PushCore
import PushStore
import Testing
import TestSupport

/// One broadcast to an Android app's Huawei phones and de-Googled phones, real processes: HMS push tokens imported
/// (5% invalid, 1% of Push Kit's sends answered 503, every access token expired once mid-run) and UnifiedPush
/// endpoints minted on three distributors — three more simulators on their own ports, each its own origin: one clean,
/// one answering 3% of pushes 429, one answering every push 800 ms late — 5% of each distributor's endpoints gone.
/// `pushctl broadcast` is killed with SIGKILL a fifth of the way and run again. Run with the fault suites, one at a time.
@Suite(.serialized, .timeLimit(.minutes(5))) struct UnifiedPushBroadcastFaultTests {
    typealias World = BroadcastCommandTests.World

    /// One distributor: a `pushctl simulator` on a port of its own, recording what it accepted.
    struct Distributor {
        let name: String
        let port: Int
        let record: String
        let process: ChildProcess

        /// Starts one with `faults` (simulator flags), on a free port, sharing the world's certificates.
        static func start(_ w: World, name: String, faults: [String]) async throws -> Distributor {
            for _ in 1...5 {
                let port = try PostgresTestServer.freePort()
                let record = w.dir.appendingPathComponent("up-\(name).jsonl").path
                let log = w.dir.appendingPathComponent("up-\(name).log")
                let process = try CLI.spawn(
                    ["simulator", "--config", w.config, "--port", String(port), "--record", record, "--client-auth", "either"] + faults,
                    stdoutPath: log.path, stderrPath: log.path)
                let ready = "listening on https://127.0.0.1:\(port) "
                func listens() -> Bool { ((try? String(contentsOf: log, encoding: .utf8)) ?? "").contains(ready) }
                try await waitUntil(deadline: .seconds(60), "distributor \(name) listens or ends") { listens() || !process.isRunning }
                if listens() { return Distributor(name: name, port: port, record: record, process: process) }
            }
            throw BroadcastCommandTests.Failure("no free port for distributor \(name)")
        }

        /// The pushes it accepted: the endpoint (its origin and `/up/<id>`) and the decrypted message.
        func pushes() throws -> [(endpoint: String, message: JSONValue, at: Int64)] {
            let text = (try? String(contentsOfFile: record, encoding: .utf8)) ?? ""
            return try text.split(separator: "\n").compactMap { line in
                let r = try JSONValue(parsing: String(line))
                guard r["service"]?.stringValue == "unifiedpush" else { return nil }
                let endpoint = "https://127.0.0.1:\(port)/up/" + (r["subscription"]?.stringValue ?? "")
                return (endpoint, try JSONValue(parsing: r["plaintext"]?.stringValue ?? "null"), r["receivedAt"]?.intValue ?? 0)
            }
        }
    }

    /// Mints `count` endpoints on `d` for the app's VAPID key, every `gone`-th deleted (0: none).
    static func mint(_ w: World, _ d: Distributor, count: Int, gone: Int = 20) async throws -> [(WebPushSubscription, gone: Bool)] {
        let key = try String(contentsOf: w.dir.appendingPathComponent("vapid.pub"), encoding: .utf8)
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("unifiedpush/mint_endpoints.py").path
        let run = try await ProcessRunner.run(
            URL(fileURLWithPath: "/usr/bin/env"),
            ["python3", script, "127.0.0.1", String(d.port), w.dir.appendingPathComponent("certs/ca.pem").path, key, String(count), String(gone)],
            timeout: 300)
        guard run.status == 0 else { throw BroadcastCommandTests.Failure("minting endpoints failed: \(run.stderr)") }
        let policy = try UnifiedPushHostPolicy(exemptHosts: ["127.0.0.1"])
        return try run.stdout.split(separator: "\n").map { line in
            let json = try JSONValue(parsing: String(line))
            let subscription = JSONValue.object([("endpoint", json["endpoint"] ?? .null), ("keys", json["keys"] ?? .null)])
            return (try WebPushSubscription(json: subscription, unifiedPush: policy), json["gone"] == .bool(true))
        }
    }

    @Test(arguments: ["sqlite", "postgres"])
    func aBroadcastToHMSAndThreeDistributorsKilledAndResumedReachesEveryLiveDeviceOnceAndPrunesTheDead(_ backend: String) async throws {
        let database = backend == "postgres" ? try await PostgresTestServer.shared().makeDatabase("upbroadcast") : "registry.sqlite"
        let hmsCount = 1500, perDistributor = 500
        let tokens = (0..<hmsCount).map { _ in HMSBroadcastFaultTests.hmsToken() }
        let invalid = stride(from: 0, to: hmsCount, by: 20).map { tokens[$0] }
        var w = try await World.make(
            tokens: 0, database: database,
            hms: .init(invalid: invalid, flowControlFraction: 0.01, expireTokensAfter: 1000), unifiedPush: true)
        defer { w.stop() }
        var distributors: [Distributor] = []
        defer { for d in distributors { d.process.stop() } }
        distributors.append(try await Distributor.start(w, name: "clean", faults: []))
        // 3% of the busy one's pushes answered 429: a delivery is deferred after five 429s in a row, 0.03⁵ ≈ 2·10⁻⁸
        // per delivery (at 20% it was 3·10⁻⁴, over 500 endpoints and two backends one CI run in three).
        distributors.append(try await Distributor.start(w, name: "busy", faults: ["--fraction-429", "0.03"]))
        distributors.append(try await Distributor.start(w, name: "slow", faults: ["--delay-ms", "800"]))

        let registry = try w.openRegistry()
        var live = Set<String>(), gone = Set<String>()
        var requests: [RegistrationRequest] = []
        for d in distributors {
            for (subscription, isGone) in try await Self.mint(w, d, count: perDistributor) {
                requests.append(RegistrationRequest(app: "example", unifiedPush: subscription))
                if isGone { gone.insert(subscription.endpoint.url) } else { live.insert(subscription.endpoint.url) }
            }
        }
        let batch = requests
        try await registry.run { registry in for r in registry.registerBatch(batch) { _ = try r.get() } }
        let imported = try await CLI.run(
            ["tokens", "import", "--config", w.config, "--app", "example", "--service", "hms", "-"], stdin: tokens.joined(separator: "\n"))
        #expect(imported.status == 0, "\(imported.stderr)")
        let total = hmsCount + 3 * perDistributor
        let dead = invalid.count + gone.count
        #expect(gone.count == 3 * (perDistributor / 20))

        let args = ["broadcast", "--config", w.config, "--app", "example", "--id", "android", "--alert", "Digest", "--json", "--rate", "800"]
        let started = Date()
        let summary = try await w.killedAndResumed(args, id: "android", killAt: total / 5, registry: registry, timeout: 400)
        #expect(summary["done"] == .int(Int64(total)) && summary["accepted"] == .int(Int64(total - dead)), "\(summary)")
        #expect(summary["pruned"] == .int(Int64(dead)) && summary["tokenDead"] == .int(Int64(dead)), "\(summary)")
        #expect(summary["deferred"] == .int(0), "\(summary)")
        let up = try await CLI.run(["tokens", "count", "--config", w.config, "--app", "example", "--service", "unifiedpush"])
        #expect(up.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == String(live.count), "unifiedpush after: \(up.stdout) \(up.stderr)")

        // Every live endpoint got the notification in Web Push's JSON form, on its own distributor; no gone one did.
        var copies: [String: Int] = [:]
        var lastAt: [String: Int64] = [:]
        for d in distributors {
            for p in try d.pushes() {
                #expect(p.message["body"]?.stringValue == "Digest" && p.message["tag"]?.stringValue == "android", "\(p.message)")
                copies[p.endpoint, default: 0] += 1
                lastAt[d.name] = max(lastAt[d.name] ?? 0, p.at)
            }
        }
        #expect(Set(copies.keys) == live, "\(live.subtracting(copies.keys).count) live endpoints missed, \(Set(copies.keys).subtracting(live).count) gone ones delivered")
        var hmsReceived = Set<String>()
        for r in try w.records() where r["service"]?.stringValue == "hms" {
            hmsReceived.insert(r["token"]?.stringValue ?? "")
            copies[r["token"]?.stringValue ?? "", default: 0] += 1
        }
        #expect(hmsReceived == Set(tokens).subtracting(invalid))
        let twice = copies.values.filter { $0 > 1 }.count
        let flagged = Int(summary["possiblyDuplicated"]?.intValue ?? 0)
        // The documented bound: twice a UnifiedPush app's window, 2,000 (SenderConfiguration.unifiedPushWindow;
        // docs/unifiedpush.md), every repeat flagged.
        #expect(twice <= 2 * 2_000 && twice <= flagged, "sent twice \(twice), flagged \(flagged)")
        let startMs = Int64(started.timeIntervalSince1970 * 1000)
        let finished = distributors.map { "\($0.name) \(String(format: "%.1f", Double((lastAt[$0.name] ?? startMs) - startMs) / 1000)) s" }
        print("FAULT kill -9 then resume (HMS + UnifiedPush on three distributors, \(backend)): devices \(total) (hms \(hmsCount), unifiedpush \(3 * perDistributor)), dead \(dead) pruned, sent twice \(twice), flagged \(flagged), last push per distributor: \(finished.joined(separator: ", ")), duration \(String(format: "%.1f", Date().timeIntervalSince(started))) s")
    }
}
