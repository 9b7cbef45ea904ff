import Foundation
import PushCore
import PushSender
import PushStore
import Testing

/// Registering browsers' push subscriptions over HTTP (`"service": "webpush"`), the app's VAPID public key, and
/// the refusals: each a 400 naming the field, with nothing stored.
@Suite struct WebPushRegistrationTests {
    /// The P-256 generator, uncompressed: a point on the curve.
    static let p256dh = Base64URL.encode(hex(
        "046b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c2964fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f5"))
    /// The same x with y + 1: 65 bytes starting 0x04, not on the curve.
    static let offCurve = Base64URL.encode(hex(
        "046b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c2964fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f6"))
    static let auth = Base64URL.encode([UInt8](repeating: 7, count: 16))

    static func hex(_ text: String) -> [UInt8] {
        stride(from: 0, to: text.count, by: 2).map { UInt8(text.dropFirst($0).prefix(2), radix: 16)! }
    }

    static func body(
        endpoint: String = "https://web.push.apple.com/QGmZ", p256dh: String = p256dh, auth: String = auth,
        extraSubscription: String = "", extra: String = ""
    ) -> String {
        #"{"service":"webpush","subscription":{"endpoint":"\#(endpoint)","expirationTime":null,"keys":{"p256dh":"\#(p256dh)","auth":"\#(auth)"}\#(extraSubscription)}\#(extra)}"#
    }

    static func start() async throws -> TestServer {
        try await TestServer.start(webPush: try WebPushSettings(
            vapidKey: "/nonexistent/vapid.pem", subject: "mailto:ops@example.com", allowedHosts: ["push.example.net:8443"]))
    }

    func device(_ s: TestServer, _ key: DeviceToken) async throws -> RegisteredDevice? {
        try await s.store.run { try $0.device(app: "example", token: key) }
    }

    func count(_ s: TestServer, _ app: String) async throws -> Int {
        try await s.store.run { try $0.count(app: app, channel: nil, environment: nil) }
    }

    func post(_ s: TestServer, _ body: String, app: String = "example") async throws -> TestServer.Reply {
        try await s.request("POST", "/v1/apps/\(app)/devices", key: TestServer.registrationKey, contentType: "application/json", body: body)
    }

    @Test func aSubscriptionIsRegisteredRefreshedAndReplacedUnderItsEndpointsKey() async throws {
        let s = try await Self.start()
        defer { Task { try? await s.stop() } }
        let endpoint = "https://web.push.apple.com/QGmZ"
        let key = DeviceKey.webPush(endpointURL: endpoint)
        let created = try await post(s, Self.body(extra: #","channels":["news"],"locale":"de-DE""#))
        #expect(created.status == 201, "\(String(decoding: created.body, as: UTF8.self))")
        #expect(created.json?["token"]?.stringValue == key.hex)
        #expect(created.json?["service"]?.stringValue == "webpush" && created.json?["endpoint"]?.stringValue == endpoint)
        let stored = try #require(try await device(s, key))
        #expect(stored.service == .webpush && stored.webPush?.endpoint.url == endpoint && stored.channels == ["news"])
        #expect(stored.webPush?.p256dh == Base64URL.decode(Self.p256dh) && stored.webPush?.auth == [UInt8](repeating: 7, count: 16))
        #expect(try await post(s, Self.body()).json?["outcome"]?.stringValue == "updated")

        // The lookup shows the service and the endpoint.
        let lookup = try await s.request("GET", "/v1/apps/example/devices/\(key.hex)", key: TestServer.sendKey)
        #expect(lookup.json?["service"]?.stringValue == "webpush" && lookup.json?["endpoint"]?.stringValue == endpoint)
        // And found by its endpoint, in another spelling of it (the key is the canonical form's); a text that is not
        // an endpoint (not http or https: an http one may be a UnifiedPush device's) is a 400 naming the field, an
        // endpoint nobody registered a 404.
        let respelled = "HTTPS://web.push.apple.com:443/QGmZ".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let byEndpoint = try await s.request("GET", "/v1/apps/example/devices/lookup?endpoint=\(respelled)", key: TestServer.sendKey)
        #expect(byEndpoint.status == 200 && byEndpoint.json?["token"]?.stringValue == key.hex, "\(String(decoding: byEndpoint.body, as: UTF8.self))")
        let notAnEndpoint = try await s.request("GET", "/v1/apps/example/devices/lookup?endpoint=ftp%3A%2F%2Fx%2Fy", key: TestServer.sendKey)
        #expect(notAnEndpoint.status == 400 && notAnEndpoint.json?["error"]?["code"] == .string("invalid_endpoint"))
        let unknown = try await s.request("GET", "/v1/apps/example/devices/lookup?endpoint=https%3A%2F%2Fweb.push.apple.com%2Fnobody", key: TestServer.sendKey)
        #expect(unknown.status == 404 && unknown.json?["error"]?["code"] == .string("unknown_device"))
        let neither = try await s.request("GET", "/v1/apps/example/devices/lookup", key: TestServer.sendKey)
        #expect(neither.status == 400)

        // A new subscription replaces the old one named by its endpoint; the channels and fields carry over.
        let newEndpoint = "https://push.example.net:8443/sub/2"
        let replaced = try await post(s, Self.body(endpoint: newEndpoint, extra: #","oldEndpoint":"\#(endpoint)""#))
        #expect(replaced.status == 200 && replaced.json?["outcome"]?.stringValue == "replaced")
        #expect(replaced.json?["replaced"]?.stringValue == key.hex)
        #expect(try await device(s, key) == nil)
        let newKey = DeviceKey.webPush(endpointURL: newEndpoint)
        let new = try #require(try await device(s, newKey))
        #expect(new.channels == ["news"] && new.webPush?.endpoint.url == newEndpoint)
        #expect(try await s.store.run { try $0.installation(app: "example", token: newKey) }?.locale == "de-DE")

        // An APNs device's lookup says so too.
        let apns = try await s.request("POST", "/v1/apps/example/devices", key: TestServer.registrationKey, contentType: "application/json",
                                       body: #"{"token":"\#(String(repeating: "ab", count: 32))"}"#)
        #expect(apns.status == 201 && apns.json?["service"] == nil && apns.json?["endpoint"] == nil)  // as before Web Push
        let apnsKey = String(repeating: "ab", count: 32)
        let apnsLookup = try await s.request("GET", "/v1/apps/example/devices/\(apnsKey)", key: TestServer.sendKey)
        #expect(apnsLookup.json?["service"]?.stringValue == "apns" && apnsLookup.json?["endpoint"] == nil)
    }

    @Test func badSubscriptionsAreRefusedNamingTheFieldAndNothingIsStored() async throws {
        let s = try await Self.start()
        defer { Task { try? await s.stop() } }
        let cases: [(String, String, String)] = [
            (Self.body(endpoint: "http://web.push.apple.com/x"), "invalid_subscription.endpoint", "https"),
            (Self.body(endpoint: "https://evil.example.com/x"), "invalid_subscription.endpoint", "evil.example.com"),
            (Self.body(endpoint: "https://push.example.net/x"), "invalid_subscription.endpoint", "not an allowed push service"),  // port 443, not 8443
            (Self.body(endpoint: "https://127.0.0.1/x"), "invalid_subscription.endpoint", "127.0.0.1"),
            (Self.body(endpoint: "https://[::1]/x"), "invalid_subscription.endpoint", "::1"),
            (Self.body(endpoint: "https://localhost/x"), "invalid_subscription.endpoint", "localhost"),
            (Self.body(p256dh: Base64URL.encode([0x04] + [UInt8](repeating: 1, count: 30))), "invalid_subscription.keys.p256dh", "65 bytes"),
            (Self.body(p256dh: Self.offCurve), "invalid_subscription.keys.p256dh", "not a point on the P-256 curve"),
            (Self.body(auth: Base64URL.encode([UInt8](repeating: 1, count: 12))), "invalid_subscription.keys.auth", "16 bytes"),
            (Self.body(auth: "not*base64"), "invalid_subscription.keys.auth", "base64url"),
            (Self.body(extraSubscription: #","kind":"x""#), "invalid_subscription.kind", "not a field of a push subscription"),
            (#"{"service":"webpush"}"#, "invalid_subscription", "required"),
            (#"{"service":"webpush","token":"\#(String(repeating: "ab", count: 32))","subscription":{}}"#, "invalid_token", "not by a token"),
            (#"{"service":"safari"}"#, "invalid_service", "apns, webpush, fcm, hms, harmonyos or unifiedpush"),
            (#"{"token":"\#(String(repeating: "ab", count: 32))","oldEndpoint":"https://web.push.apple.com/x"}"#, "invalid_oldEndpoint", "webpush"),
        ]
        for (body, code, says) in cases {
            let reply = try await post(s, body)
            let message = reply.json?["error"]?["message"]?.stringValue ?? ""
            #expect(reply.status == 400 && reply.errorCode == code && message.contains(says), "\(body) → \(reply.status) \(reply.errorCode ?? "") \(message)")
        }
        #expect(try await count(s, "example") == 0)

        // An app without Web Push refuses the service.
        let other = try await s.request("POST", "/v1/apps/other/devices", key: TestServer.otherSendKey, contentType: "application/json", body: Self.body())
        #expect(other.status == 400 && other.errorCode == "invalid_service", "\(String(decoding: other.body, as: UTF8.self))")
        #expect(try await count(s, "other") == 0)
    }

    @Test func anAPNsTokenCannotTakeAWebPushDevicesKey() async throws {
        let s = try await Self.start()
        defer { Task { try? await s.stop() } }
        let key = DeviceKey.webPush(endpointURL: "https://web.push.apple.com/QGmZ")
        #expect(try await post(s, Self.body()).status == 201)
        let apns = try await post(s, #"{"token":"\#(key.hex)"}"#)
        #expect(apns.status == 409 && apns.errorCode == "service_conflict", "\(String(decoding: apns.body, as: UTF8.self))")
        #expect(apns.json?["error"]?["message"]?.stringValue?.contains("webpush") == true)
        #expect(try await device(s, key)?.service == .webpush)
    }

    @Test func theKeyEndpointGivesTheAppsVAPIDPublicKey() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("vapid-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("vapid.pem").path
        let publicKey = try VAPIDKeyFile.create(at: path)
        let s = try await TestServer.start(webPush: try WebPushSettings(vapidKey: path, subject: "mailto:ops@example.com"))
        defer { Task { try? await s.stop() } }
        let reply = try await s.request("GET", "/v1/apps/example/webpush/key", key: TestServer.registrationKey)
        #expect(reply.status == 200 && reply.json?["publicKey"]?.stringValue == publicKey)
        #expect(Base64URL.decode(publicKey)?.count == 65)
        let none = try await s.request("GET", "/v1/apps/other/webpush/key", key: TestServer.otherSendKey)
        #expect(none.status == 404 && none.errorCode == "webpush_not_configured")
        #expect(try await s.request("GET", "/v1/apps/example/webpush/key").status == 401)
    }
}
