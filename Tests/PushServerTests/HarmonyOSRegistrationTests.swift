import Foundation
import PushCore
import PushStore
import Testing

/// Registering HarmonyOS NEXT devices' push tokens over HTTP (`"service": "harmonyos"`), and the refusals: each a 400
/// naming the field, with nothing stored.
@Suite struct HarmonyOSRegistrationTests {
    static let settings = HarmonyOSSettings(
        projectId: "101234567890", serviceAccount: "/nonexistent/key.json", endpoint: .simulator, category: "IM")
    static func token(_ n: Int) -> String { "MAMzLg\(n)AAAAfi7GvwXiTflj6vow-XJ4gsQYPBfqvy8mgYkLHMUwuPyKaeQgfXkIvS22A" }

    func post(_ s: TestServer, _ body: String) async throws -> TestServer.Reply {
        try await s.request("POST", "/v1/apps/example/devices", key: TestServer.registrationKey, contentType: "application/json", body: body)
    }

    func count(_ s: TestServer) async throws -> Int {
        try await s.store.run { try $0.count(app: "example", channel: nil, environment: nil) }
    }

    @Test func aTokenIsRegisteredAndReplacedUnderItsKeyAndShownAsHarmonyOSToken() async throws {
        let s = try await TestServer.start(harmonyos: Self.settings)
        defer { Task { try? await s.stop() } }
        let first = Self.token(1), second = Self.token(2)
        let created = try await post(s, #"{"service":"harmonyos","token":"\#(first)","channels":["news"],"locale":"zh-CN"}"#)
        #expect(created.status == 201, "\(String(decoding: created.body, as: UTF8.self))")
        #expect(created.json?["token"]?.stringValue == DeviceKey.harmonyos(token: first).hex)
        #expect(DeviceKey.harmonyos(token: first) != DeviceKey.hms(token: first))
        #expect(created.json?["service"]?.stringValue == "harmonyos" && created.json?["harmonyosToken"]?.stringValue == first)
        let lookup = try await s.request("GET", "/v1/apps/example/devices/\(DeviceKey.harmonyos(token: first).hex)", key: TestServer.sendKey)
        #expect(lookup.json?["service"]?.stringValue == "harmonyos", "\(String(decoding: lookup.body, as: UTF8.self))")
        let replaced = try await post(s, #"{"service":"harmonyos","token":"\#(second)","oldToken":"\#(first)"}"#)
        #expect(replaced.status == 200 && replaced.json?["outcome"]?.stringValue == "replaced")
        let device = try await s.store.run { try $0.device(app: "example", token: DeviceKey.harmonyos(token: second)) }
        #expect(device?.service == .harmonyos && device?.registrationToken == second && device?.channels == ["news"])
        #expect(try await count(s) == 1)
    }

    @Test func aTokenOfTheWrongFormOrAnAppWithoutHarmonyOSIsA400NamingTheFieldWithNothingStored() async throws {
        let s = try await TestServer.start(harmonyos: Self.settings)
        defer { Task { try? await s.stop() } }
        let spaced = try await post(s, #"{"service":"harmonyos","token":"MAMzLg0ht AACfi7GvwXiTflj6vow-XJ4gsQYPBfqvy8mg"}"#)
        #expect(spaced.status == 400 && spaced.errorCode == "invalid_token", "\(String(decoding: spaced.body, as: UTF8.self))")
        let short = try await post(s, #"{"service":"harmonyos","token":"MAMzLg"}"#)
        #expect(short.status == 400 && short.errorCode == "invalid_token")
        let missing = try await post(s, #"{"service":"harmonyos"}"#)
        #expect(missing.status == 400 && missing.errorCode == "invalid_token")
        let badOld = try await post(s, #"{"service":"harmonyos","token":"\#(Self.token(4))","oldToken":"x y"}"#)
        #expect(badOld.status == 400 && badOld.errorCode == "invalid_oldToken", "\(String(decoding: badOld.body, as: UTF8.self))")
        let unknown = try await post(s, #"{"service":"harmonyOS","token":"\#(Self.token(5))"}"#)
        #expect(unknown.status == 400 && unknown.errorCode == "invalid_service")
        #expect(unknown.json?["error"]?["message"]?.stringValue?.contains("harmonyos") == true)
        #expect(try await count(s) == 0)

        let without = try await TestServer.start()
        defer { Task { try? await without.stop() } }
        let refused = try await post(without, #"{"service":"harmonyos","token":"\#(Self.token(3))"}"#)
        #expect(refused.status == 400 && refused.errorCode == "invalid_service", "\(String(decoding: refused.body, as: UTF8.self))")
        #expect(refused.json?["error"]?["message"]?.stringValue?.contains("apps.example.harmonyos") == true)
        #expect(try await count(without) == 0)
    }
}
