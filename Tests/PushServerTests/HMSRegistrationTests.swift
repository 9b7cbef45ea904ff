import Foundation
import PushCore
import PushStore
import Testing

/// Registering Huawei phones' HMS push tokens over HTTP (`"service": "hms"`), and the refusals: each a 400 naming the
/// field, with nothing stored.
@Suite struct HMSRegistrationTests {
    static let settings = HMSSettings(clientId: "104000001", clientSecretFile: "/nonexistent/secret", endpoint: .simulator)
    static func token(_ n: Int) -> String { "IQAAAACy0ht\(n)AACfi7GvwXiTflj6vow-XJ4gsQYPBfqvy8mgYkLHMUwuPyKaeQgfXkIvS22A" }

    func post(_ s: TestServer, _ body: String) async throws -> TestServer.Reply {
        try await s.request("POST", "/v1/apps/example/devices", key: TestServer.registrationKey, contentType: "application/json", body: body)
    }

    func count(_ s: TestServer) async throws -> Int {
        try await s.store.run { try $0.count(app: "example", channel: nil, environment: nil) }
    }

    @Test func aTokenIsRegisteredAndReplacedUnderItsKeyAndShownAsHMSToken() async throws {
        let s = try await TestServer.start(hms: Self.settings)
        defer { Task { try? await s.stop() } }
        let first = Self.token(1), second = Self.token(2)
        let created = try await post(s, #"{"service":"hms","token":"\#(first)","channels":["news"],"locale":"zh-CN"}"#)
        #expect(created.status == 201, "\(String(decoding: created.body, as: UTF8.self))")
        #expect(created.json?["token"]?.stringValue == DeviceKey.hms(token: first).hex)
        #expect(created.json?["service"]?.stringValue == "hms" && created.json?["hmsToken"]?.stringValue == first)
        let lookup = try await s.request("GET", "/v1/apps/example/devices/\(DeviceKey.hms(token: first).hex)", key: TestServer.sendKey)
        #expect(lookup.json?["service"]?.stringValue == "hms" && lookup.json?["hmsToken"]?.stringValue == first)
        let replaced = try await post(s, #"{"service":"hms","token":"\#(second)","oldToken":"\#(first)"}"#)
        #expect(replaced.status == 200 && replaced.json?["outcome"]?.stringValue == "replaced")
        let device = try await s.store.run { try $0.device(app: "example", token: DeviceKey.hms(token: second)) }
        #expect(device?.service == .hms && device?.registrationToken == second && device?.channels == ["news"])
        #expect(try await count(s) == 1)
    }

    @Test func aTokenOfTheWrongFormOrAnAppWithoutHMSIsA400NamingTheFieldWithNothingStored() async throws {
        let s = try await TestServer.start(hms: Self.settings)
        defer { Task { try? await s.stop() } }
        let spaced = try await post(s, #"{"service":"hms","token":"IQAAAACy0ht AACfi7GvwXiTflj6vow-XJ4gsQYPBfqvy8mg"}"#)
        #expect(spaced.status == 400 && spaced.errorCode == "invalid_token", "\(String(decoding: spaced.body, as: UTF8.self))")
        let short = try await post(s, #"{"service":"hms","token":"IQAAAA"}"#)
        #expect(short.status == 400 && short.errorCode == "invalid_token")
        let missing = try await post(s, #"{"service":"hms"}"#)
        #expect(missing.status == 400 && missing.errorCode == "invalid_token")
        #expect(try await count(s) == 0)

        let without = try await TestServer.start()
        defer { Task { try? await without.stop() } }
        let refused = try await post(without, #"{"service":"hms","token":"\#(Self.token(3))"}"#)
        #expect(refused.status == 400 && refused.errorCode == "invalid_service", "\(String(decoding: refused.body, as: UTF8.self))")
        #expect(refused.json?["error"]?["message"]?.stringValue?.contains("apps.example.hms") == true)
        #expect(try await count(without) == 0)
    }
}
