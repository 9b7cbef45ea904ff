import Foundation
import PushCore
import PushStore
import Testing
import TestSupport

/// One broadcast with an audience and per-locale text across all six services an app can have, real processes: the
/// simulator plays APNs, a Web Push service, FCM, Huawei Push Kit (HMS Core and HarmonyOS NEXT) and a UnifiedPush
/// distributor at once. Each device
/// the audience names gets its own service's payload in its own language, and no other device gets anything.
@Suite(.serialized, .timeLimit(.minutes(3))) struct EveryServiceAudienceTests {
    typealias World = BroadcastCommandTests.World

    @Test func anAudienceBroadcastGivesEachDeviceOfEveryServiceItsServicesPayloadInItsLanguage() async throws {
        var w = try await World.make(
            tokens: 0, webPush: true, fcm: .init(unregistered: [], accessTokenLifetime: 3600), hms: .init(), unifiedPush: true,
            harmonyos: .init())
        defer { w.stop() }
        let perService = 6
        // Device i of each service: French when i is even, else American English; in channel news when i % 3 != 2.
        func locale(_ i: Int) -> String { i % 2 == 0 ? "fr-FR" : "en-US" }
        func channel(_ i: Int) -> String { i % 3 == 2 ? "sport" : "news" }
        func expected(_ i: Int) -> String? { channel(i) == "news" ? (i % 2 == 0 ? "Bonjour" : "Hello") : nil }

        let web = try await WebPushBroadcastFaultTests.mint(w, count: perService, expireEvery: 0)
        let distributor = UnifiedPushBroadcastFaultTests.Distributor(
            name: "main", port: w.port, record: w.record, process: w.simulator!)
        let up = try await UnifiedPushBroadcastFaultTests.mint(w, distributor, count: perService, gone: 0)
        let fcm = (0..<perService).map { _ in ThreeServiceBroadcastFaultTests.fcmToken() }
        let hms = (0..<perService).map { _ in HMSBroadcastFaultTests.hmsToken() }
        let harmony = (0..<perService).map { _ in HarmonyOSBroadcastFaultTests.harmonyosToken() }
        var requests: [RegistrationRequest] = []
        for i in 0..<perService {
            var each = [
                RegistrationRequest(app: "example", token: try DeviceToken(parsing: World.token(i))),
                RegistrationRequest(app: "example", subscription: web[i].subscription),
                RegistrationRequest(app: "example", fcmToken: try FCMRegistrationToken(parsing: fcm[i])),
                RegistrationRequest(app: "example", hmsToken: try HMSPushToken(parsing: hms[i])),
                RegistrationRequest(app: "example", harmonyosToken: try HarmonyOSPushToken(parsing: harmony[i])),
                RegistrationRequest(app: "example", unifiedPush: up[i].0),
            ]
            for j in each.indices {
                each[j].channels = [channel(i)]
                each[j].installation.locale = .set(locale(i))
            }
            requests += each
        }
        let registry = try w.openRegistry()
        let batch = requests
        try await registry.run { registry in for r in registry.registerBatch(batch) { _ = try r.get() } }

        let run = try await CLI.run([
            "broadcast", "--config", w.config, "--app", "example", "--id", "five", "--where", "channel = news",
            "--alert", "Hello", "--alert-for", "fr=Bonjour", "--json",
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let summary = try JSONValue(parsing: run.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        let audience = (0..<perService).filter { expected($0) != nil }.count * 6
        #expect(summary["done"] == .int(Int64(audience)) && summary["accepted"] == .int(Int64(audience)), "\(summary)")
        w.stopSimulator()  // flushes the record

        // What each device got, by service and its index: the text in the service's own form.
        var got: [String: String] = [:]
        func lastSegment(_ url: String) -> String { url.split(separator: "/").last.map(String.init) ?? "" }
        var index: [String: String] = [:]
        for i in 0..<perService {
            index["apns:" + World.token(i)] = "apns \(i)"
            index["fcm:" + fcm[i]] = "fcm \(i)"
            index["hms:" + hms[i]] = "hms \(i)"
            index["harmonyos:" + harmony[i]] = "harmonyos \(i)"
            index["webpush:" + lastSegment(web[i].subscription.endpoint.url)] = "webpush \(i)"
            index["unifiedpush:" + lastSegment(up[i].0.endpoint.url)] = "unifiedpush \(i)"
        }
        for r in try w.records() {
            let service = r["service"]?.stringValue ?? "apns"
            let text: String?
            let key: String
            switch service {
            case "webpush", "unifiedpush":
                key = service + ":" + (r["subscription"]?.stringValue ?? "")
                text = try JSONValue(parsing: r["plaintext"]?.stringValue ?? "null")["body"]?.stringValue
            case "fcm":
                key = "fcm:" + (r["token"]?.stringValue ?? "")
                text = r["message"]?["notification"]?["body"]?.stringValue
            case "hms":
                key = "hms:" + (r["token"]?.stringValue ?? "")
                text = r["message"]?["android"]?["notification"]?["body"]?.stringValue
            case "harmonyos":
                key = "harmonyos:" + (r["token"]?.stringValue ?? "")
                text = r["message"]?["payload"]?["notification"]?["body"]?.stringValue
            case "oauth", "hms-oauth":
                continue
            default:
                key = "apns:" + (r["token"]?.stringValue ?? "")
                let alert = r["payload"]?["aps"]?["alert"]
                text = alert?.stringValue ?? alert?["body"]?.stringValue
            }
            let name = index[key] ?? "unknown \(key)"
            #expect(got[name] == nil, "\(name) got two messages")
            got[name] = text ?? "(no text)"
        }
        var want: [String: String] = [:]
        for i in 0..<perService {
            guard let text = expected(i) else { continue }
            for service in ["apns", "webpush", "fcm", "hms", "harmonyos", "unifiedpush"] { want["\(service) \(i)"] = text }
        }
        #expect(got == want)
    }
}
