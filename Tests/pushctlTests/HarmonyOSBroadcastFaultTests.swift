import Foundation
import PushCore
import PushStore
import Testing
import TestSupport

/// One broadcast to an app's iPhones and HarmonyOS NEXT phones, real processes: APNs tokens and HarmonyOS push tokens
/// imported (`tokens import --service harmonyos`), `pushctl broadcast` sending each through its service's sender (the
/// HarmonyOS one signing its own JWT from the app's service-account key file), the simulator answering as APNs and as
/// Push Kit's scenario API, verifying that JWT — 5% of the HarmonyOS tokens invalid (80300007) — killed with SIGKILL
/// mid-run and resumed. Run with the fault suites, one at a time.
@Suite(.serialized, .timeLimit(.minutes(4))) struct HarmonyOSBroadcastFaultTests {
    typealias World = BroadcastCommandTests.World

    /// A push token in the look of Huawei's examples (`MAMzLg…`, base64url, 130 characters), random.
    static func harmonyosToken() -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        return "MAMzLg" + String((0..<124).map { _ in alphabet.randomElement()! })
    }

    @Test(arguments: ["sqlite", "postgres"])
    func aBroadcastToHarmonyOSAndAPNsKilledAndResumedReachesEveryLiveDeviceWithItsCategoryAndPrunesInvalidTokens(
        _ backend: String
    ) async throws {
        let database = backend == "postgres" ? try await PostgresTestServer.shared().makeDatabase("harmonyosbroadcast") : "registry.sqlite"
        let apnsCount = 600, harmonyosCount = 1800
        let total = apnsCount + harmonyosCount
        let tokens = (0..<harmonyosCount).map { _ in Self.harmonyosToken() }
        let invalid = stride(from: 0, to: harmonyosCount, by: 20).map { tokens[$0] }
        var w = try await World.make(tokens: apnsCount, database: database, harmonyos: .init(invalid: invalid))
        defer { w.stop() }
        let registry = try w.openRegistry()
        let imported = try await CLI.run(
            ["tokens", "import", "--config", w.config, "--app", "example", "--service", "harmonyos", "-"],
            stdin: tokens.joined(separator: "\n"))
        #expect(imported.status == 0, "\(imported.stderr)")
        let counted = try await CLI.run(["tokens", "count", "--config", w.config, "--app", "example", "--service", "harmonyos"])
        #expect(counted.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == String(harmonyosCount), "\(counted.stdout) \(counted.stderr)")
        let live = Set(tokens).subtracting(invalid)
        let dead = invalid.count

        let args = ["broadcast", "--config", w.config, "--app", "example", "--id", "harmony", "--alert", "Digest", "--json", "--rate", "600"]
        let summary = try await w.killedAndResumed(args, id: "harmony", killAt: total / 5, registry: registry)
        #expect(summary["done"] == .int(Int64(total)) && summary["accepted"] == .int(Int64(total - dead)), "\(summary)")
        #expect(summary["pruned"] == .int(Int64(dead)) && summary["tokenDead"] == .int(Int64(dead)), "\(summary)")
        #expect(summary["deferred"] == .int(0), "\(summary)")
        let notAccepted = summary["rejected"]?.objectPairs ?? []
        #expect(notAccepted.map(\.0) == ["80300007"], "every device not accepted is an invalid token: \(summary)")
        let after = try await CLI.run(["tokens", "count", "--config", w.config, "--app", "example", "--service", "harmonyos"])
        #expect(after.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == String(live.count), "harmonyos after: \(after.stdout)")

        // Every live HarmonyOS phone got an alert message (push-type 0) with the app's category and default title,
        // the copies beyond one within the documented bound; every iPhone its APNs payload.
        var copies: [String: Int] = [:]
        var received = Set<String>(), iPhones = Set<String>()
        for r in try w.records() {
            let token = r["token"]?.stringValue ?? ""
            if r["service"]?.stringValue == "harmonyos" {
                let notification = r["message"]?["payload"]?["notification"]
                #expect(r["pushType"]?.intValue == 0, "\(r)")
                #expect(notification?["category"]?.stringValue == "SUBSCRIPTION", "\(r)")
                #expect(notification?["title"]?.stringValue == "Example" && notification?["body"]?.stringValue == "Digest", "\(r)")
                received.insert(token)
            } else {
                iPhones.insert(token)
            }
            copies[token, default: 0] += 1
        }
        #expect(received == live, "\(live.subtracting(received).count) live HarmonyOS tokens missed, \(received.subtracting(live).count) invalid ones delivered")
        #expect(iPhones.count == apnsCount)
        let twice = copies.values.filter { $0 > 1 }.count
        let flagged = Int(summary["possiblyDuplicated"]?.intValue ?? 0)
        #expect(twice <= 2 * 500 && twice <= flagged, "sent twice \(twice), flagged \(flagged)")
        print("FAULT kill -9 then resume (APNs + HarmonyOS broadcast, \(backend)): devices \(total) (apns \(apnsCount), harmonyos \(harmonyosCount)), invalid \(dead) pruned, sent twice \(twice), flagged \(flagged)")
    }
}
