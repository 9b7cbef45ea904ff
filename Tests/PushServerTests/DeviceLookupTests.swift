import Foundation
import PushCore
import PushStore
import Testing

/// `GET /v1/apps/{app}/devices/{token}`: a registered device's channels, environment and times (send keys only).
@Suite(.timeLimit(.minutes(2))) struct DeviceLookupTests {
    @Test func aRegisteredDeviceIsDescribed() async throws {
        let s = try await TestServer.start()
        let token = String(repeating: "ab", count: 32)
        let before = Date()
        let registered = try await s.request("POST", "/v1/apps/example/devices", key: TestServer.registrationKey, contentType: "application/json",
                                             body: #"{"token":"\#(token.uppercased())","channels":["news","sport"],"environment":"production"}"#)
        #expect(registered.status == 201)
        let reply = try await s.request("GET", "/v1/apps/example/devices/\(token.uppercased())", key: TestServer.sendKey)
        #expect(reply.status == 200)
        let json = try #require(reply.json)
        #expect(json["token"] == .string(token))
        #expect(json["channels"] == .array([.string("news"), .string("sport")]))
        #expect(json["environment"] == .string("production"))
        #expect(json["lastSuccessAt"] == .null)
        let registeredAt = try #require(json["registeredAt"]?.stringValue)
        let ms = try Timestamp.parseRFC3339(registeredAt)
        #expect(abs(Double(ms) / 1000 - before.timeIntervalSince1970) < 60)
        #expect(json["lastRegisteredAt"]?.stringValue != nil)

        let other = String(repeating: "cd", count: 32)
        #expect(try await s.request("GET", "/v1/apps/example/devices/\(other)", key: TestServer.sendKey).errorCode == "unknown_device")
        #expect(try await s.request("GET", "/v1/apps/example/devices/zz", key: TestServer.sendKey).errorCode == "invalid_token")
        #expect(try await s.request("GET", "/v1/apps/example/devices/\(token)", key: TestServer.registrationKey).status == 403)
        #expect(try await s.request("GET", "/v1/apps/example/devices/\(token)", key: TestServer.otherSendKey).status == 403)
        #expect(try await s.request("GET", "/v1/apps/example/devices/\(token)").status == 401)
        // The count route is still the count.
        #expect(try await s.request("GET", "/v1/apps/example/devices/count", key: TestServer.sendKey).json?["count"] == .int(1))
        try await s.stop()
    }
}
