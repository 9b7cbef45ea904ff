import Foundation
import PushCore
import PushStore
import Testing

/// Issue #39's preview and count per service: `POST …/payload-preview` also shows what a web device would get
/// (only for an app with Web Push), and `POST …/audience-count` splits its count by push service.
@Suite(.timeLimit(.minutes(2))) struct WebPushPreviewTests {
    static func start(declarative: Bool = false) async throws -> TestServer {
        try await TestServer.start(webPush: try WebPushSettings(
            vapidKey: "/nonexistent/vapid.pem", subject: "mailto:ops@example.com", allowedHosts: ["push.example.net:8443"],
            declarative: declarative))
    }

    func preview(_ s: TestServer, _ body: String) async throws -> JSONValue {
        let reply = try await s.request("POST", "/v1/apps/example/payload-preview", key: TestServer.sendKey, contentType: "application/json", body: body)
        #expect(reply.status == 200, "\(String(decoding: reply.body, as: UTF8.self))")
        return try #require(reply.json)
    }

    func json(_ text: String) throws -> JSONValue { try JSONValue(parsing: Array(text.utf8)) }

    @Test func aWebPushAppsPreviewShowsTheServiceWorkerPayloadPerLocale() async throws {
        let s = try await Self.start()
        defer { Task { try? await s.stop() } }
        let answer = try await preview(s, #"{"title":"Hi","alert":{"default":"Hello","de":"Hallo"},"badge":2,"data":{"url":"https://example.com/a","k":1},"options":{"collapseId":"c1"}}"#)
        let web = try #require(answer["webPush"])
        let expected = try json(#"{"id":"00000000-0000-0000-0000-000000000000","title":"Hi","body":"Hello","badge":2,"url":"https://example.com/a","tag":"c1","data":{"k":1}}"#)
        #expect(web["form"] == .string("serviceWorker"))
        #expect(web["payload"] == expected)
        #expect(web["bytes"] == .int(Int64(expected.encoded.count)))
        // Each locale's variant has its own web payload, mapped from that locale's APNs payload.
        let german = try #require(answer["variants"]?["de"]?["webPush"])
        #expect(german["payload"]?["body"] == .string("Hallo") && german["payload"]?["title"] == .string("Hi"))
        // The APNs side is unchanged.
        #expect(answer["payload"]?["aps"]?["alert"]?["body"] == .string("Hello"))
    }

    @Test func aSilentPushShowsWhyWebDevicesDoNotGetIt() async throws {
        let s = try await Self.start()
        defer { Task { try? await s.stop() } }
        let answer = try await preview(s, #"{"silent":true,"data":{"k":1}}"#)
        #expect(answer["webPush"] == .object([("skipped", .string(WebPushPayload.silentReason))]))
    }

    @Test func aDeclarativeAppsPreviewShowsTheDeclarativeForm() async throws {
        let s = try await Self.start(declarative: true)
        defer { Task { try? await s.stop() } }
        let web = try #require(try await preview(s, #"{"title":"Hi","alert":"Hello","data":{"url":"https://example.com/a"}}"#)["webPush"])
        #expect(web["form"] == .string("declarative"))
        #expect(web["payload"]?["web_push"] == .int(8030))
        #expect(web["payload"]?["notification"]?["navigate"] == .string("https://example.com/a"))
    }

    /// An app with UnifiedPush (and Web Push) previews `unifiedPush` apart: the same service-worker JSON, never the
    /// declarative form (the app's own code reads it), and a silent push, which Web Push skips, IS sent.
    @Test func aUnifiedPushAppsPreviewShowsTheJSONTheAppGetsAndASilentPushIsSent() async throws {
        let s = try await TestServer.start(
            webPush: try WebPushSettings(
                vapidKey: "/nonexistent/vapid.pem", subject: "mailto:ops@example.com", allowedHosts: ["push.example.net:8443"],
                declarative: true),
            unifiedPush: try UnifiedPushSettings(vapidKey: "/nonexistent/vapid.pem", subject: "mailto:ops@example.com"))
        defer { Task { try? await s.stop() } }
        let answer = try await preview(s, #"{"title":"Hi","alert":{"default":"Hello","de":"Hallo"},"data":{"url":"https://example.com/a","k":1},"options":{"collapseId":"c1"}}"#)
        let up = try #require(answer["unifiedPush"], "\(answer)")
        let expected = try json(#"{"id":"00000000-0000-0000-0000-000000000000","title":"Hi","body":"Hello","url":"https://example.com/a","tag":"c1","data":{"k":1}}"#)
        #expect(up == .object([("payload", expected), ("bytes", .int(Int64(expected.encoded.count)))]))
        #expect(answer["webPush"]?["form"] == .string("declarative"), "Web Push keeps its own form beside it")
        #expect(answer["variants"]?["de"]?["unifiedPush"]?["payload"]?["body"] == .string("Hallo"))

        let silent = try await preview(s, #"{"silent":true,"data":{"k":1}}"#)
        #expect(silent["webPush"] == .object([("skipped", .string(WebPushPayload.silentReason))]))
        let data = try json(#"{"id":"00000000-0000-0000-0000-000000000000","data":{"k":1}}"#)
        #expect(silent["unifiedPush"] == .object([("payload", data), ("bytes", .int(Int64(data.encoded.count)))]), "\(silent)")
    }

    @Test func anAppWithoutWebPushHasNoWebPreview() async throws {
        let s = try await TestServer.start()
        defer { Task { try? await s.stop() } }
        let answer = try await preview(s, #"{"alert":{"default":"Hello","de":"Hallo"}}"#)
        #expect(answer["webPush"] == nil && answer["variants"]?["de"]?["webPush"] == nil)
        #expect(answer["unifiedPush"] == nil && answer["variants"]?["de"]?["unifiedPush"] == nil)
        #expect(answer["payload"] != nil)
    }

    @Test func theAudienceCountIsSplitByService() async throws {
        let s = try await Self.start()
        defer { Task { try? await s.stop() } }
        func register(_ body: String) async throws {
            let reply = try await s.request("POST", "/v1/apps/example/devices", key: TestServer.registrationKey, contentType: "application/json", body: body)
            #expect(reply.status == 201, "\(String(decoding: reply.body, as: UTF8.self))")
        }
        try await register(#"{"token":"\#(String(repeating: "ab", count: 32))","channels":["news"],"locale":"de-DE"}"#)
        try await register(#"{"token":"\#(String(repeating: "cd", count: 32))","channels":["news"],"locale":"fr-FR"}"#)
        try await register(#"{"token":"\#(String(repeating: "ef", count: 32))","channels":["sport"],"locale":"de-AT"}"#)
        for (n, locale) in [(1, "de-DE"), (2, "fr-FR")] {
            try await register(WebPushRegistrationTests.body(
                endpoint: "https://push.example.net:8443/s\(n)", extra: #","channels":["news"],"locale":"\#(locale)""#))
        }
        func count(_ audience: String) async throws -> JSONValue? {
            let reply = try await s.request("POST", "/v1/apps/example/audience-count", key: TestServer.sendKey, contentType: "application/json", body: #"{"audience":\#(audience)}"#)
            #expect(reply.status == 200, "\(String(decoding: reply.body, as: UTF8.self))")
            return reply.json
        }
        let split: (Int64, Int64, Int64) -> JSONValue = { total, apns, web in
            .object([("count", .int(total)), ("byService", .object([("apns", .int(apns)), ("webpush", .int(web)), ("fcm", .int(0)), ("hms", .int(0)), ("harmonyos", .int(0)), ("unifiedpush", .int(0))]))])
        }
        #expect(try await count(#"{"where":["channel = news"]}"#) == split(4, 2, 2))
        #expect(try await count(#"{"where":["locale = de*"]}"#) == split(3, 2, 1))
        #expect(try await count(#"{"where":["service = webpush"]}"#) == split(2, 0, 2))
        #expect(try await count(#"{"where":["channel = none"]}"#) == split(0, 0, 0))
    }
}
