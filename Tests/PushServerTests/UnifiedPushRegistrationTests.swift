import Foundation
import PushCore
import PushStore
import Testing
import TestSupport

/// Registering UnifiedPush endpoints over HTTP (`"service": "unifiedpush"`), with the discovery the server runs before
/// storing one, against a real distributor stand-in (Tests/unifiedpush/discovery_server.py, plain HTTP on 127.0.0.1,
/// exempted by the app's `exemptHosts`): each refusal a 400 naming the field (or a 503 when discovery gets no answer),
/// with nothing stored.
@Suite(.serialized) struct UnifiedPushRegistrationTests {
    static let p256dh = WebPushRegistrationTests.p256dh
    static let auth = WebPushRegistrationTests.auth

    /// The stand-in distributor and its port; stopped by the caller.
    static func distributor() async throws -> (ChildProcess, Int) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("up-discovery-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let out = dir.appendingPathComponent("port").path
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("unifiedpush/discovery_server.py").path
        let child = try ChildProcess("/usr/bin/python3", [script], stdoutPath: out)
        var port = 0
        try await waitUntil(deadline: .seconds(20), "the discovery stand-in prints its port") {
            port = Int((try? String(contentsOfFile: out, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 0
            return port > 0
        }
        return (child, port)
    }

    static func body(_ endpoint: String, extra: String = "") -> String {
        #"{"service":"unifiedpush","subscription":{"endpoint":"\#(endpoint)","keys":{"p256dh":"\#(p256dh)","auth":"\#(auth)"}}\#(extra)}"#
    }

    static func settings(exempt: [String] = ["127.0.0.1"]) throws -> UnifiedPushSettings {
        try UnifiedPushSettings(vapidKey: "/nonexistent/vapid.pem", subject: "mailto:ops@example.com", exemptHosts: exempt)
    }

    func post(_ s: TestServer, _ body: String) async throws -> TestServer.Reply {
        try await s.request("POST", "/v1/apps/example/devices", key: TestServer.registrationKey, contentType: "application/json", body: body)
    }

    func count(_ s: TestServer) async throws -> Int {
        try await s.store.run { try $0.count(app: "example", channel: nil, environment: nil) }
    }

    @Test func anEndpointThatAnswersDiscoveryIsRegisteredUnderItsKeyAndReplaced() async throws {
        let (distributor, port) = try await Self.distributor()
        defer { distributor.stop() }
        let s = try await TestServer.start(unifiedPush: try Self.settings())
        defer { Task { try? await s.stop() } }
        let endpoint = "http://127.0.0.1:\(port)/up/ok"
        let created = try await post(s, Self.body(endpoint, extra: #","channels":["news"],"locale":"de-DE""#))
        #expect(created.status == 201, "\(String(decoding: created.body, as: UTF8.self))")
        let key = DeviceKey.unifiedPush(endpointURL: endpoint)
        #expect(created.json?["token"]?.stringValue == key.hex)
        #expect(created.json?["service"]?.stringValue == "unifiedpush" && created.json?["endpoint"]?.stringValue == endpoint)
        let device = try await s.store.run { try $0.device(app: "example", token: key) }
        #expect(device?.service == .unifiedpush && device?.webPush?.endpoint.url == endpoint && device?.channels == ["news"])
        // Its key is apart from a Web Push device's with the same URL; the endpoint finds it, as the API shows it.
        #expect(key != DeviceKey.webPush(endpointURL: endpoint))
        let found = try await s.request(
            "GET", "/v1/apps/example/devices/lookup?endpoint=" + (endpoint.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""),
            key: TestServer.sendKey)
        #expect(found.status == 200 && found.json?["token"]?.stringValue == key.hex, "\(String(decoding: found.body, as: UTF8.self))")
        #expect(found.json?["service"]?.stringValue == "unifiedpush" && found.json?["endpoint"]?.stringValue == endpoint)
        let again = try await post(s, Self.body("http://127.0.0.1:\(port)/up/ok?second", extra: #","oldEndpoint":"\#(endpoint)""#))
        #expect(again.status == 200 && again.json?["outcome"]?.stringValue == "replaced", "\(String(decoding: again.body, as: UTF8.self))")
        #expect(try await count(s) == 1)
    }

    @Test func discoveryThatRedirectsAnswersOtherwiseOrIsRefusedByAddressIsA400WithNothingStored() async throws {
        let (distributor, port) = try await Self.distributor()
        defer { distributor.stop() }
        let s = try await TestServer.start(unifiedPush: try Self.settings())
        defer { Task { try? await s.stop() } }
        for (path, why) in [("redirect", "redirect"), ("other", "not {"), ("missing", "HTTP 404")] {
            let reply = try await post(s, Self.body("http://127.0.0.1:\(port)/up/\(path)"))
            #expect(reply.status == 400 && reply.errorCode == "invalid_subscription.endpoint", "\(path): \(String(decoding: reply.body, as: UTF8.self))")
            #expect(reply.json?["error"]?["message"]?.stringValue?.contains(why) == true, "\(path): \(String(decoding: reply.body, as: UTF8.self))")
        }
        // `localhost` is not exempt (only 127.0.0.1 is, exactly): its name resolves to a loopback address, refused on the
        // discovery connection itself.
        let named = try await post(s, Self.body("http://localhost:\(port)/up/ok"))
        #expect(named.status == 400 && named.json?["error"]?["message"]?.stringValue?.contains("loopback") == true,
                "\(String(decoding: named.body, as: UTF8.self))")
        #expect(try await count(s) == 0)
    }

    @Test func aDistributorThatNeverAnswersIsA503TheClientRetriesWithNothingStored() async throws {
        let (distributor, port) = try await Self.distributor()
        defer { distributor.stop() }
        let s = try await TestServer.start(unifiedPush: try Self.settings())
        defer { Task { try? await s.stop() } }
        let reply = try await post(s, Self.body("http://127.0.0.1:\(port)/up/silent"))
        #expect(reply.status == 503 && reply.errorCode == "discovery_unavailable", "\(String(decoding: reply.body, as: UTF8.self))")
        #expect(try await count(s) == 0)
    }

    @Test func aPrivateAddressALongOrNonHTTPEndpointOrAnAppWithoutUnifiedPushIsA400NamingTheField() async throws {
        let s = try await TestServer.start(unifiedPush: try Self.settings(exempt: []))
        defer { Task { try? await s.stop() } }
        let privateAddress = try await post(s, Self.body("https://10.1.2.3/up/x"))
        #expect(privateAddress.status == 400 && privateAddress.errorCode == "invalid_subscription.endpoint")
        #expect(privateAddress.json?["error"]?["message"]?.stringValue?.contains("private") == true)
        let long = try await post(s, Self.body("https://push.example.net/" + String(repeating: "a", count: 1000)))
        #expect(long.status == 400 && long.json?["error"]?["message"]?.stringValue?.contains("1000") == true,
                "\(String(decoding: long.body, as: UTF8.self))")
        let ftp = try await post(s, Self.body("ftp://push.example.net/up/x"))
        #expect(ftp.status == 400 && ftp.errorCode == "invalid_subscription.endpoint")
        let token = try await post(s, #"{"service":"unifiedpush","token":"abc"}"#)
        #expect(token.status == 400)
        #expect(try await count(s) == 0)

        let without = try await TestServer.start()
        defer { Task { try? await without.stop() } }
        let refused = try await post(without, Self.body("https://push.example.net/up/x"))
        #expect(refused.status == 400 && refused.errorCode == "invalid_service", "\(String(decoding: refused.body, as: UTF8.self))")
        #expect(try await count(without) == 0)
    }
}
