import Foundation
import PushCore
import PushStore
import Testing

/// `POST /v1/apps/{app}/payload-preview`: the payload and headers a send job would use, from the same builder,
/// and the same 400 as the send for the same content.
@Suite(.timeLimit(.minutes(2))) struct PayloadPreviewTests {
    func preview(_ s: TestServer, _ body: String) async throws -> TestServer.Reply {
        try await s.request("POST", "/v1/apps/example/payload-preview", key: TestServer.sendKey, contentType: "application/json", body: body)
    }

    @Test func anAlertIsBuiltAsTheSendWouldBuildIt() async throws {
        let s = try await TestServer.start()
        let reply = try await preview(s, #"{"title":"Hi","alert":"Houston","badge":3,"sound":"default","data":{"k":[1,2]}}"#)
        #expect(reply.status == 200)
        let json = try #require(reply.json)
        let expected = try JSONValue(parsing: Array(#"{"aps":{"alert":{"title":"Hi","body":"Houston"},"badge":3,"sound":"default"},"k":[1,2]}"#.utf8))
        #expect(json["payload"] == expected)
        #expect(json["headers"]?["apns-push-type"] == .string("alert"))
        #expect(json["headers"]?["apns-priority"] == .string("10"))
        #expect(json["headers"]?["apns-topic"] == .string("com.example.app"))
        #expect(json["headers"]?["apns-collapse-id"] == nil)
        #expect(json["bytes"] == .int(Int64(expected.encoded.count)))
        #expect(json["limit"] == .int(4096))
        #expect(json["truncated"] == .bool(false))
        // Nothing was stored.
        let read1 = try await s.registry.run { [registry = s.registry] _ in try registry.broadcasts(app: "example", states: BroadcastState.allCases) }
        #expect(read1.isEmpty)
        try await s.stop()
    }

    @Test func silentAndVoIPGetTheirPushTypePriorityAndTopic() async throws {
        let s = try await TestServer.start()
        let silent = try #require(try await preview(s, #"{"silent":true,"data":{"photoTitle":"Nebula"}}"#).json)
        #expect(silent["payload"] == (try JSONValue(parsing: Array(#"{"aps":{"content-available":1},"photoTitle":"Nebula"}"#.utf8))))
        #expect(silent["headers"]?["apns-push-type"] == .string("background"))
        #expect(silent["headers"]?["apns-priority"] == .string("5"))
        let voip = try #require(try await preview(s, #"{"payload":{"aps":{},"call":1},"options":{"pushType":"voip","collapseId":"c","expiration":0}}"#).json)
        #expect(voip["headers"]?["apns-topic"] == .string("com.example.app.voip"))
        #expect(voip["headers"]?["apns-collapse-id"] == .string("c"))
        #expect(voip["headers"]?["apns-expiration"] == .string("0"))
        #expect(voip["limit"] == .int(5120))
        let long = try #require(try await preview(s, #"{"alert":"\#(String(repeating: "é", count: 3000))"}"#).json)
        #expect(long["truncated"] == .bool(true))
        let bytes = try #require(long["bytes"]?.intValue)
        #expect(bytes <= 4096 && bytes > 4000)
        try await s.stop()
    }

    @Test func invalidContentIsTheSame400AsTheSend() async throws {
        let s = try await TestServer.start()
        for content in [
            #""silent":true,"alert":"x""#, #""badge":-1"#, #""data":[1]"#, #""options":{"priority":10},"silent":true"#,
            #""payload":{"aps":{"content-available":1},"pad":"\#(String(repeating: "x", count: 5000))"}"#,
        ] {
            let preview = try await preview(s, "{\(content)}")
            let send = try await s.request("POST", "/v1/apps/example/notifications", key: TestServer.sendKey,
                                           contentType: "application/json", body: #"{"all":true,\#(content)}"#)
            #expect(preview.status == 400, "\(content)")
            #expect(send.status == 400, "\(content)")
            #expect(preview.json?["error"] == send.json?["error"], "\(content)")
        }
        // No target, id or time: those belong to the send.
        for extra in [#"{"alert":"x","all":true}"#, #"{"alert":"x","tokens":["00"]}"#, #"{"alert":"x","id":"a"}"#] {
            #expect(try await preview(s, extra).errorCode == "invalid_field", "\(extra)")
        }
        #expect(try await preview(s, "[]").errorCode == "invalid_json")
        #expect(try await s.request("POST", "/v1/apps/example/payload-preview", key: TestServer.registrationKey, contentType: "application/json", body: "{}").status == 403)
        #expect(try await s.request("POST", "/v1/apps/example/payload-preview", contentType: "application/json", body: "{}").status == 401)
        #expect(try await s.request("POST", "/v1/apps/example/payload-preview", key: TestServer.sendKey, contentType: "text/plain", body: "{}").status == 415)
        try await s.stop()
    }
}
