import PushSimulator
import Foundation
import PushCore
import PushStore
import Testing

/// Registering Android apps' FCM registration tokens over HTTP (`"service": "fcm"`), and the refusals: each a 400
/// naming the field, with nothing stored.
@Suite struct FCMRegistrationTests {
    /// A token in today's form (`<22>:APA91b<134>`), distinct per `n`.
    static func token(_ n: Int) -> String { "fGhIjKlMnOpQrStUvWx\(n)yz:APA91b" + String(repeating: "Q-9_aZ", count: 22) + "\(n)" }

    static func body(token: String, extra: String = "") -> String {
        #"{"service":"fcm","token":"\#(token)"\#(extra)}"#
    }

    func device(_ s: TestServer, _ key: DeviceToken) async throws -> RegisteredDevice? {
        try await s.store.run { try $0.device(app: "example", token: key) }
    }

    func count(_ s: TestServer) async throws -> Int {
        try await s.store.run { try $0.count(app: "example", channel: nil, environment: nil) }
    }

    func post(_ s: TestServer, _ body: String) async throws -> TestServer.Reply {
        try await s.request("POST", "/v1/apps/example/devices", key: TestServer.registrationKey, contentType: "application/json", body: body)
    }

    /// The app has no FCM credentials configured: registration does not need them (the token is kept; a send to it
    /// is refused by the sender, naming the missing service).
    @Test func aTokenIsRegisteredRefreshedAndReplacedUnderItsKeyWithoutFCMConfigured() async throws {
        let s = try await TestServer.start()
        defer { Task { try? await s.stop() } }
        let first = Self.token(1), second = Self.token(2)
        let key = DeviceKey.fcm(token: first)
        let created = try await post(s, Self.body(token: first, extra: #","channels":["news"],"locale":"de-DE""#))
        #expect(created.status == 201, "\(String(decoding: created.body, as: UTF8.self))")
        #expect(created.json?["token"]?.stringValue == key.hex)
        #expect(created.json?["service"]?.stringValue == "fcm" && created.json?["fcmToken"]?.stringValue == first)
        #expect(created.json?["endpoint"] == nil && created.json?["outcome"]?.stringValue == "created")
        let stored = try #require(try await device(s, key))
        #expect(stored.service == .fcm && stored.registrationToken == first && stored.channels == ["news"])
        let again = try await post(s, Self.body(token: first))
        #expect(again.status == 200 && again.json?["outcome"]?.stringValue == "updated" && again.json?["channels"] == .array([.string("news")]))

        // The lookup shows the service and the token.
        let lookup = try await s.request("GET", "/v1/apps/example/devices/\(key.hex)", key: TestServer.sendKey)
        #expect(lookup.json?["service"]?.stringValue == "fcm" && lookup.json?["fcmToken"]?.stringValue == first)
        // And found by the registration token itself; one that is not a token is a 400 naming the field.
        let byToken = try await s.request("GET", "/v1/apps/example/devices/lookup?fcmToken=\(first)", key: TestServer.sendKey)
        #expect(byToken.status == 200 && byToken.json?["token"]?.stringValue == key.hex, "\(String(decoding: byToken.body, as: UTF8.self))")
        let notAToken = try await s.request("GET", "/v1/apps/example/devices/lookup?fcmToken=a%20b", key: TestServer.sendKey)
        #expect(notAToken.status == 400 && notAToken.json?["error"]?["code"] == .string("invalid_fcmToken"))

        // A new token replaces the old one named verbatim; the channels and fields carry over.
        let replaced = try await post(s, Self.body(token: second, extra: #","oldToken":"\#(first)""#))
        #expect(replaced.status == 200 && replaced.json?["outcome"]?.stringValue == "replaced")
        #expect(replaced.json?["replaced"]?.stringValue == key.hex)
        #expect(try await device(s, key) == nil)
        let newKey = DeviceKey.fcm(token: second)
        let new = try #require(try await device(s, newKey))
        #expect(new.channels == ["news"] && new.registrationToken == second)
        #expect(try await s.store.run { try $0.installation(app: "example", token: newKey) }?.locale == "de-DE")
        #expect(try await count(s) == 1)

        // What the simulator mints as an FCM registration token registers (its referee and our rule agree).
        let minted = PushSimulator.mintFCMToken()
        #expect(try await post(s, Self.body(token: minted)).status == 201)
        #expect(try await device(s, DeviceKey.fcm(token: minted))?.registrationToken == minted)
    }

    /// The exact answers docs/http-api.md shows for its FCM example (readme.sh runs it against `make run`).
    @Test func theDocumentedExampleAnswersAsDocumented() async throws {
        let s = try await TestServer.start()
        defer { Task { try? await s.stop() } }
        let token = "cAbCdEfGhIjKlMnOpQrStU:APA91bHzXk-9_example-registration-token-0123456789"
        let created = String(decoding: try await post(s, #"{"service":"fcm","token":"\#(token)","locale":"de-DE"}"#).body, as: UTF8.self)
        #expect(created.hasPrefix(#"{"token":"526b86bd3305fc2824742cc66f129e6b3ebc9e19b4eb430d0409cf7ba0ac6a45","service":"fcm","fcmToken":"\#(token)","channels":[],"#), "\(created)")
        #expect(created.contains(#""locale":"de-DE","#) && created.hasSuffix(#""outcome":"created"}"#), "\(created)")
        let refused = String(decoding: try await post(s, #"{"service":"fcm","token":"too-short"}"#).body, as: UTF8.self)
        #expect(refused == #"{"error":{"code":"invalid_token","message":"token must be an FCM registration token of 32…4096 characters, not 9"}}"#, "\(refused)")
    }

    @Test func badTokensAreRefusedNamingTheFieldAndNothingIsStored() async throws {
        let s = try await TestServer.start()
        defer { Task { try? await s.stop() } }
        let good = Self.token(3)
        let cases: [(String, String, String)] = [
            (Self.body(token: "abc"), "invalid_token", "not 3"),
            (Self.body(token: String(repeating: "a", count: 31)), "invalid_token", "32…4096"),
            (Self.body(token: String(repeating: "a", count: 4097)), "invalid_token", "not 4097"),
            (Self.body(token: String(good.dropLast()) + "/"), "invalid_token", "A-Z a-z 0-9 - _ :"),
            (Self.body(token: String(good.dropLast()) + " "), "invalid_token", "A-Z a-z 0-9 - _ :"),
            (Self.body(token: ""), "invalid_token", "not 0"),
            (#"{"service":"fcm","token":12345678901234567890123456789012345}"#, "invalid_token", "must be a string"),
            (#"{"service":"fcm","token":null}"#, "invalid_token", "must be a string"),
            (#"{"service":"fcm"}"#, "invalid_token", "required"),
            (#"{"service":"fcm","locale":"de-DE"}"#, "invalid_token", "required"),
            (Self.body(token: good, extra: #","oldToken":"short""#), "invalid_oldToken", "not 5"),
            (Self.body(token: good, extra: #","oldToken":"\#(String(good.dropLast()))+""#), "invalid_oldToken", "A-Z a-z 0-9 - _ :"),
            (Self.body(token: good, extra: #","oldToken":7"#), "invalid_oldToken", "must be a string"),
            (Self.body(token: good, extra: #","oldToken":"""#), "invalid_oldToken", "not 0"),
            (Self.body(token: good, extra: #","subscription":{}"#), "invalid_subscription", "webpush"),
            (Self.body(token: good, extra: #","oldEndpoint":"https://web.push.apple.com/x""#), "invalid_oldEndpoint", "webpush"),
            (Self.body(token: good, extra: #","environment":"staging""#), "invalid_environment", "development or production"),
            (Self.body(token: good, extra: #","colour":"red""#), "invalid_field", "unknown field"),
        ]
        for (body, code, says) in cases {
            let reply = try await post(s, body)
            let message = reply.json?["error"]?["message"]?.stringValue ?? ""
            #expect(reply.status == 400 && reply.errorCode == code && message.contains(says), "\(body.prefix(120)) → \(reply.status) \(reply.errorCode ?? "") \(message)")
        }
        #expect(try await count(s) == 0)
        // An old token that is well formed but unknown is no error: the new token is registered.
        #expect(try await post(s, Self.body(token: good, extra: #","oldToken":null"#)).status == 201)
        #expect(try await count(s) == 1)
    }

    /// As with a web device, an Android device and an iOS device of the same installation (and user) are two devices
    /// side by side: neither replaces the other, and an APNs token cannot take the FCM device's key.
    @Test func anFCMAndAnAPNsDeviceOfTheSameInstallationCoexist() async throws {
        let s = try await TestServer.start()
        defer { Task { try? await s.stop() } }
        let token = Self.token(4), apns = String(repeating: "ab", count: 32)
        #expect(try await post(s, Self.body(token: token, extra: #","installation":"inst-1","locale":"de-DE""#)).status == 201)
        #expect(try await post(s, #"{"token":"\#(apns)","installation":"inst-1","locale":"de-DE"}"#).status == 201)
        #expect(try await count(s) == 2)
        let fcmInstallation = try await s.store.run { try $0.installation(app: "example", token: DeviceKey.fcm(token: token)) }
        let apnsInstallation = try await s.store.run { try $0.installation(app: "example", token: try DeviceToken(parsing: apns)) }
        #expect(fcmInstallation?.installation == "inst-1" && apnsInstallation?.installation == "inst-1")

        let conflict = try await post(s, #"{"token":"\#(DeviceKey.fcm(token: token).hex)"}"#)
        #expect(conflict.status == 409 && conflict.errorCode == "service_conflict", "\(String(decoding: conflict.body, as: UTF8.self))")
        #expect(conflict.json?["error"]?["message"]?.stringValue?.contains("fcm") == true)
        #expect(try await device(s, DeviceKey.fcm(token: token))?.service == .fcm)

        // The audience count splits by service, fcm included, and `service in` selects it.
        func audienceCount(_ audience: String) async throws -> JSONValue? {
            let reply = try await s.request("POST", "/v1/apps/example/audience-count", key: TestServer.sendKey, contentType: "application/json", body: #"{"audience":\#(audience)}"#)
            #expect(reply.status == 200, "\(String(decoding: reply.body, as: UTF8.self))")
            return reply.json
        }
        let split: (Int64, Int64, Int64) -> JSONValue = { total, apns, fcm in
            .object([("count", .int(total)), ("byService", .object([("apns", .int(apns)), ("webpush", .int(0)), ("fcm", .int(fcm)), ("hms", .int(0)), ("harmonyos", .int(0)), ("unifiedpush", .int(0))]))])
        }
        #expect(try await audienceCount(#"{"where":["locale = de-DE"]}"#) == split(2, 1, 1))
        #expect(try await audienceCount(#"{"where":["service = fcm"]}"#) == split(1, 0, 1))
        #expect(try await audienceCount(#"{"where":["service in apns,fcm"]}"#) == split(2, 1, 1))
    }
}
