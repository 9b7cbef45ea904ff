import Foundation
import PushCore
import Testing

/// `POST …/payload-preview` for an app with FCM also shows the FCM HTTP v1 message an Android device would get,
/// mapped by the FCM sender's own function, per locale; an Apple-only push type says why Android devices do not
/// get it; an app without FCM shows none.
@Suite(.timeLimit(.minutes(2))) struct FCMPreviewTests {
    static func start() async throws -> TestServer {
        try await TestServer.start(fcm: FCMSettings(serviceAccount: "/nonexistent/account.json", endpoint: .simulator))
    }

    func preview(_ s: TestServer, _ body: String) async throws -> JSONValue {
        let reply = try await s.request("POST", "/v1/apps/example/payload-preview", key: TestServer.sendKey, contentType: "application/json", body: body)
        #expect(reply.status == 200, "\(String(decoding: reply.body, as: UTF8.self))")
        return try #require(reply.json)
    }

    @Test func anFCMAppsPreviewShowsTheAndroidMessagePerLocale() async throws {
        let s = try await Self.start()
        defer { Task { try? await s.stop() } }
        let answer = try await preview(s, #"{"title":"Hi","alert":{"default":"Hello","de":"Hallo"},"badge":2,"sound":"default","data":{"k":1},"options":{"collapseId":"c1"}}"#)
        let fcm = try #require(answer["fcm"], "\(answer)")
        let expected = try JSONValue(parsing: Array(#"""
            {"message":{"token":"DEVICE_REGISTRATION_TOKEN","notification":{"title":"Hi","body":"Hello"},"data":{"k":"1"},
             "android":{"collapse_key":"c1","priority":"HIGH","notification":{"sound":"default","notification_count":2}}}}
            """#.utf8))
        #expect(fcm["payload"] == expected, "\(fcm)")
        #expect(fcm["bytes"] == .int(Int64(expected.encoded.count)))
        let german = try #require(answer["variants"]?["de"]?["fcm"])
        #expect(german["payload"]?["message"]?["notification"]?["body"] == .string("Hallo"))
        #expect(answer["webPush"] == nil, "the app has no Web Push")
        #expect(answer["payload"]?["aps"]?["alert"]?["body"] == .string("Hello"), "the APNs side is unchanged")
    }

    @Test func anAppleOnlyPushTypeSaysWhyAndroidDevicesDoNotGetIt() async throws {
        let s = try await Self.start()
        defer { Task { try? await s.stop() } }
        let answer = try await preview(s, #"{"alert":"Ring","options":{"pushType":"voip"}}"#)
        let reason = try #require(answer["fcm"]?["skipped"]?.stringValue, "\(answer)")
        #expect(reason.contains("FCM has no voip push"))
    }

    @Test func anAppWithoutFCMHasNoFCMPreview() async throws {
        let s = try await TestServer.start()
        defer { Task { try? await s.stop() } }
        let answer = try await preview(s, #"{"alert":{"default":"Hello","de":"Hallo"}}"#)
        #expect(answer["fcm"] == nil && answer["variants"]?["de"]?["fcm"] == nil)
    }
}
