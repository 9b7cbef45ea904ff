import Foundation
import PushCore
import PushStore
import Testing
import TestSupport

/// An app is a set of services: a web-only app and an Android-only app, configured without a single APNs key, each
/// complete a broadcast through the simulator with 5% of their devices gone and 429/503 answers injected; and an app
/// whose APNs key cannot be read still delivers to its browsers and Android phones. Real processes, both backends.
/// Run with the fault suites, one at a time.
@Suite(.serialized, .timeLimit(.minutes(4))) struct OneServiceAppBroadcastFaultTests {
    typealias World = BroadcastCommandTests.World

    static let devices = 2000
    static let faults = World.retryFaults

    /// The broadcast's JSON summary, after checking it completed with exit `status`.
    static func summary(of run: ProcessOutcome, status: Int32) throws -> JSONValue {
        #expect(run.status == status, "\(run.stderr)")
        let summary = try JSONValue(parsing: run.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(summary["state"]?.stringValue == "completed", "\(summary)")
        return summary
    }

    /// Registers `web` subscriptions minted by the world's simulator and the FCM tokens `fcm` for the app; its registry.
    static func registerBrowsersAndPhones(_ w: World, web: Int, fcm: [String]) async throws -> any RegistryStore {
        let minted = try await WebPushBroadcastFaultTests.mint(w, count: web, expireEvery: 0)
        let registry = try w.openRegistry()
        try await WebPushBroadcastFaultTests.register(minted, in: registry)
        let imported = try await CLI.run(
            ["tokens", "import", "--config", w.config, "--app", "example", "--service", "fcm", "-"], stdin: fcm.joined(separator: "\n"))
        #expect(imported.status == 0, "\(imported.stderr)")
        return registry
    }

    @Test(arguments: ["sqlite", "postgres"])
    func aWebOnlyAppBroadcastsToEveryLiveSubscriptionOnceAndPrunesTheExpired(_ backend: String) async throws {
        let database = backend == "postgres" ? try await PostgresTestServer.shared().makeDatabase("webonly") : "registry.sqlite"
        var w = try await World.make(tokens: 0, simulatorArgs: Self.faults, database: database, webPush: true, apns: .none)
        defer { w.stop() }
        let config = try String(contentsOfFile: w.config, encoding: .utf8)
        #expect(!config.contains("topic") && !config.contains("auth"), "the app has no APNs setting: \(config)")
        let n = Self.devices
        let minted = try await WebPushBroadcastFaultTests.mint(w, count: n, expireEvery: 20)
        let registry = try w.openRegistry()
        try await WebPushBroadcastFaultTests.register(minted, in: registry)
        let live = Set(minted.filter { !$0.expired }.map(\.subscription.endpoint.url))
        let gone = n / 20

        let run = try await CLI.run(
            ["broadcast", "--config", w.config, "--app", "example", "--id", "web-only", "--alert", "News", "--json"], timeout: 300)
        let summary = try Self.summary(of: run, status: 0)
        #expect(summary["done"] == .int(Int64(n)) && summary["accepted"] == .int(Int64(n - gone)), "\(summary)")
        #expect(summary["pruned"] == .int(Int64(gone)) && summary["deferred"] == .int(0), "\(summary)")
        #expect(summary["retried"].flatMap(\.intValue).map { $0 > 0 } == true, "429/503 were injected: \(summary)")
        let left: Int = try await registry.run { try $0.count(app: "example", channel: nil, environment: nil) }
        #expect(left == n - gone)
        var copies: [String: Int] = [:]
        for push in try WebPushBroadcastFaultTests.webPushes(w) {
            #expect(push.message["body"]?.stringValue == "News")
            copies[push.endpoint, default: 0] += 1
        }
        #expect(Set(copies.keys) == live, "\(live.subtracting(copies.keys).count) live subscriptions missed")
        #expect(copies.values.allSatisfy { $0 == 1 }, "\(copies.values.filter { $0 > 1 }.count) received twice")
        #expect(try w.records().allSatisfy { $0["service"]?.stringValue == "webpush" })
    }

    @Test(arguments: ["sqlite", "postgres"])
    func anAndroidOnlyAppBroadcastsToEveryLiveTokenOnceAndPrunesTheUnregistered(_ backend: String) async throws {
        let database = backend == "postgres" ? try await PostgresTestServer.shared().makeDatabase("androidonly") : "registry.sqlite"
        let n = Self.devices
        let tokens = (0..<n).map { _ in ThreeServiceBroadcastFaultTests.fcmToken() }
        let dead = stride(from: 0, to: n, by: 20).map { tokens[$0] }
        var w = try await World.make(
            tokens: 0, simulatorArgs: Self.faults, database: database, fcm: .init(unregistered: dead), apns: .none)
        defer { w.stop() }
        let config = try String(contentsOfFile: w.config, encoding: .utf8)
        #expect(!config.contains("topic") && !config.contains("webpush"), "the app has FCM only: \(config)")
        let imported = try await CLI.run(
            ["tokens", "import", "--config", w.config, "--app", "example", "--service", "fcm", "-"], stdin: tokens.joined(separator: "\n"))
        #expect(imported.status == 0, "\(imported.stderr)")

        let run = try await CLI.run(
            ["broadcast", "--config", w.config, "--app", "example", "--id", "android-only", "--alert", "Match day", "--json"], timeout: 300)
        let summary = try Self.summary(of: run, status: 0)
        #expect(summary["done"] == .int(Int64(n)) && summary["accepted"] == .int(Int64(n - dead.count)), "\(summary)")
        #expect(summary["pruned"] == .int(Int64(dead.count)) && summary["deferred"] == .int(0), "\(summary)")
        #expect(summary["retried"].flatMap(\.intValue).map { $0 > 0 } == true, "429/503 were injected: \(summary)")
        let counted = try await CLI.run(["tokens", "count", "--config", w.config, "--app", "example", "--service", "fcm"])
        #expect(counted.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == String(n - dead.count))
        var copies: [String: Int] = [:]
        for r in try w.records() where r["service"]?.stringValue == "fcm" {
            #expect(r["message"]?["notification"]?["body"]?.stringValue == "Match day")
            copies[r["token"]?.stringValue ?? "", default: 0] += 1
        }
        #expect(Set(copies.keys) == Set(tokens).subtracting(dead), "\(Set(tokens).subtracting(dead).subtracting(copies.keys).count) live tokens missed")
        #expect(copies.values.allSatisfy { $0 == 1 }, "\(copies.values.filter { $0 > 1 }.count) received twice")
        #expect(try w.records().allSatisfy { ["fcm", "oauth"].contains($0["service"]?.stringValue ?? "") })
    }

    @Test(arguments: ["sqlite", "postgres"])
    func anUnreadableP8DefersOnlyTheAPNsDevicesByNameAndTheSameCommandSendsThemOnceTheKeyIsBack(_ backend: String) async throws {
        let database = backend == "postgres" ? try await PostgresTestServer.shared().makeDatabase("unreadablep8") : "registry.sqlite"
        let (apnsCount, webCount, fcmCount) = (40, 30, 30)
        let fcmTokens = (0..<fcmCount).map { _ in ThreeServiceBroadcastFaultTests.fcmToken() }
        var w = try await World.make(
            tokens: apnsCount, database: database, tokenAuth: true, webPush: true, fcm: .init(),
            apns: .sectionWithKey("keys/AuthKey_DEVKEY1234.p8"))
        defer { w.stop() }
        let registry = try await Self.registerBrowsersAndPhones(w, web: webCount, fcm: fcmTokens)

        // The .p8 the config names is not there: APNs cannot sign; the browsers and phones are still reached.
        let args = ["broadcast", "--config", w.config, "--app", "example", "--id", "everyone", "--alert", "Hello", "--json"]
        let firstRun = try await CLI.run(args, timeout: 300)
        let first = try Self.summary(of: firstRun, status: 1)
        // Why, once, in the run's log: the file that could not be read.
        #expect(firstRun.stderr.contains("apns credentials could not be loaded") && firstRun.stderr.contains("AuthKey_DEVKEY1234.p8"), "\(firstRun.stderr)")
        #expect(first["accepted"] == .int(Int64(webCount + fcmCount)) && first["deferred"] == .int(Int64(apnsCount)), "\(first)")
        let records = try w.records()
        #expect(records.filter { $0["service"]?.stringValue == "webpush" }.count == webCount)
        #expect(records.filter { $0["service"]?.stringValue == "fcm" }.count == fcmCount)
        #expect(!records.contains { $0["token"]?.stringValue?.hasPrefix("cd") == true }, "no APNs request was made")
        // Each APNs device is deferred under the named reason, with why in its error; none of the others.
        let deferred = try await registry.run {
            try $0.deliveries(DeliveryQuery(app: "example", broadcastId: "everyone", kind: .deferred)).records
        }
        #expect(deferred.count == apnsCount)
        #expect(deferred.allSatisfy { $0.reason == "CredentialsUnavailable" && $0.service == .apns }, "\(deferred.first.map { "\($0)" } ?? "")")

        // The key put back, the same command sends the deferred APNs devices, and only them.
        let keys = w.dir.appendingPathComponent("keys")
        try FileManager.default.createDirectory(at: keys, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: w.dir.appendingPathComponent("certs/AuthKey_DEVKEY1234.p8"), to: keys.appendingPathComponent("AuthKey_DEVKEY1234.p8"))
        let second = try Self.summary(of: try await CLI.run(args, timeout: 300), status: 0)
        #expect(second["sentThisRun"] == .int(Int64(apnsCount)) && second["deferred"] == .int(0), "\(second)")
        let after = try w.records()
        #expect(after.count == records.count + apnsCount)
        #expect(Set(after.dropFirst(records.count).compactMap { $0["token"]?.stringValue }) == Set((0..<apnsCount).map(World.token)))
    }

    /// APNs refusing the app's provider token mid-run (a key APNs does not know: 403 InvalidProviderToken) stops
    /// APNs only: the browsers and phones are reached, APNs' devices deferred under `CredentialsRefused`, exit 1, not
    /// the run interrupted (exit 3) while other services could deliver; with the right key the same command sends them.
    @Test func aServiceRefusingTheCredentialsMidRunDefersOnlyItsDevicesAndTheOthersDeliver() async throws {
        let (apnsCount, webCount, fcmCount) = (40, 30, 30)
        let fcmTokens = (0..<fcmCount).map { _ in ThreeServiceBroadcastFaultTests.fcmToken() }
        var w = try await World.make(
            tokens: apnsCount, tokenAuth: true, webPush: true, fcm: .init(), apns: .sectionWithKey("keys/AuthKey_DEVKEY1234.p8"))
        defer { w.stop() }
        // A valid P-256 key under the right key id, but not the one APNs (the simulator) holds for it.
        let keys = w.dir.appendingPathComponent("keys")
        try FileManager.default.createDirectory(at: keys, withIntermediateDirectories: true)
        let key = keys.appendingPathComponent("AuthKey_DEVKEY1234.p8").path
        let made = try await ProcessRunner.run(
            URL(fileURLWithPath: "/usr/bin/openssl"), ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", key])
        #expect(made.status == 0, "\(made.stderr)")
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: key)
        let registry = try await Self.registerBrowsersAndPhones(w, web: webCount, fcm: fcmTokens)

        let args = ["broadcast", "--config", w.config, "--app", "example", "--id", "everyone", "--alert", "Hello", "--json"]
        let first = try Self.summary(of: try await CLI.run(args, timeout: 300), status: 1)
        #expect(first["accepted"] == .int(Int64(webCount + fcmCount)) && first["deferred"] == .int(Int64(apnsCount)), "\(first)")
        let records = try w.records()
        #expect(records.filter { $0["service"]?.stringValue == "webpush" }.count == webCount)
        #expect(records.filter { $0["service"]?.stringValue == "fcm" }.count == fcmCount)
        let deferred = try await registry.run {
            try $0.deliveries(DeliveryQuery(app: "example", broadcastId: "everyone", kind: .deferred)).records
        }
        #expect(deferred.count == apnsCount && deferred.allSatisfy { $0.reason == "CredentialsRefused" && $0.service == .apns })

        try FileManager.default.removeItem(atPath: key)
        try FileManager.default.copyItem(atPath: w.dir.appendingPathComponent("certs/AuthKey_DEVKEY1234.p8").path, toPath: key)
        let second = try Self.summary(of: try await CLI.run(args, timeout: 300), status: 0)
        #expect(second["sentThisRun"] == .int(Int64(apnsCount)) && second["deferred"] == .int(0), "\(second)")
        let apnsReceived = try w.records().filter { $0["token"]?.stringValue?.hasPrefix("cd") == true }
        #expect(Set(apnsReceived.compactMap { $0["token"]?.stringValue }) == Set((0..<apnsCount).map(World.token)))
    }
}
