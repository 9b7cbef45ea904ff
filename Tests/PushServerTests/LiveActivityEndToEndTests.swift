import PushSimulator
import Foundation
import PushCore
import PushServer
import PushStore
import Testing
import TestSupport

/// Live Activities and broadcast channels end to end over real sockets: the HTTP API of a real server, its real
/// sender and channel client, and the real simulator's record of what arrived on the wire.
@Suite(.timeLimit(.minutes(1))) struct LiveActivityEndToEndTests {
    typealias Setup = NotificationJobTests.Setup

    private func post(_ s: TestServer, _ path: String, key: String = "send", _ body: String) async throws -> TestServer.Reply {
        try await s.request("POST", path, key: key, contentType: "application/json", body: body)
    }

    private func waitForJob(_ s: TestServer, _ id: String) async throws -> JSONValue {
        var found = JSONValue.null
        try await waitUntil(deadline: .seconds(60), every: .milliseconds(50), "job \(id) completed or interrupted") {
            let r = try await s.request("GET", "/v1/apps/example/notifications/\(id)", key: "send")
            guard let json = r.json, let state = json["state"]?.stringValue, ["completed", "interrupted"].contains(state) else { return false }
            found = json
            return true
        }
        return found
    }

    private func aps(_ notification: ReceivedNotification) throws -> JSONValue {
        try #require(try JSONValue(parsing: notification.request.payload)["aps"])
    }

    @Test func startUpdateEndAndAChannelBroadcastArriveAsAppleSpecifies() async throws {
        let setup = try await Setup.make(tokenAuth: true)
        let (s, registry) = try await setup.server()
        let startToken = String(repeating: "a1", count: 32), updateToken = String(repeating: "b2", count: 32)

        // 1. The app registers its push-to-start token (registration key).
        let registered = try await post(s, "/v1/apps/example/live-activities/push-to-start-tokens", key: "reg",
            #"{"token":"\#(startToken)","installation":"inst-1","attributesType":"ScoreAttributes"}"#)
        #expect(registered.status == 201)
        #expect(registered.json?["kind"]?.stringValue == "push-to-start")

        // 2. The backend starts an activity: a job to every push-to-start token of the type.
        let start = try await post(s, "/v1/apps/example/live-activities/start", #"""
            {"id":"start-1","all":true,"content":{"attributes-type":"ScoreAttributes","attributes":{"home":"Lions","away":"Bears"},
             "content-state":{"score":"0-0"},"alert":{"title":"Kick-off","body":"Lions v Bears"},"input-push-token":1,"timestamp":1700000000}}
            """#)
        #expect(start.status == 202, "\(String(decoding: start.body, as: UTF8.self))")
        #expect(start.json?["devices"] == .int(1))
        #expect(try await waitForJob(s, "start-1")["accepted"] == .int(1))
        let started = try #require(setup.simulator.received.last)
        #expect(started.request.token.hex == startToken)
        #expect(started.request.topic == "com.example.app.push-type.liveactivity")
        #expect(started.request.pushType == .liveactivity && started.request.priority == .immediate)
        #expect(try aps(started) == JSONValue(parsing: #"""
            {"alert":{"title":"Kick-off","body":"Lions v Bears"},"content-state":{"score":"0-0"},"timestamp":1700000000,"event":"start",
             "attributes-type":"ScoreAttributes","attributes":{"home":"Lions","away":"Bears"},"input-push-token":1}
            """#))

        // 3. The started activity's update token arrives; the app registers it.
        let updateRegistered = try await post(s, "/v1/apps/example/live-activities/update-tokens", key: "reg",
            #"{"token":"\#(updateToken)","activityId":"act-1"}"#)
        #expect(updateRegistered.status == 201)

        // 4. Update at priority 5 with a stale date.
        let update = try await post(s, "/v1/apps/example/live-activities/activities/act-1/update",
            #"{"id":"update-1","priority":5,"content":{"content-state":{"score":"1-0"},"stale-date":1700003600,"timestamp":1700000100}}"#)
        #expect(update.status == 202, "\(String(decoding: update.body, as: UTF8.self))")
        #expect(try await waitForJob(s, "update-1")["accepted"] == .int(1))
        let updated = try #require(setup.simulator.received.last)
        #expect(updated.request.token.hex == updateToken && updated.request.priority == .conserve)
        #expect(updated.request.topic == "com.example.app.push-type.liveactivity")
        #expect(try aps(updated) == JSONValue(parsing: #"{"stale-date":1700003600,"content-state":{"score":"1-0"},"timestamp":1700000100,"event":"update"}"#))

        // 5. End with a dismissal date: the update token leaves the registry.
        let end = try await post(s, "/v1/apps/example/live-activities/activities/act-1/end",
            #"{"id":"end-1","content":{"content-state":{"score":"2-1"},"dismissal-date":1700007200,"timestamp":1700000200}}"#)
        #expect(end.status == 202)
        #expect(try await waitForJob(s, "end-1")["accepted"] == .int(1))
        let ended = try #require(setup.simulator.received.last)
        #expect(ended.request.token.hex == updateToken)
        #expect(try aps(ended) == JSONValue(parsing: #"{"content-state":{"score":"2-1"},"timestamp":1700000200,"event":"end","dismissal-date":1700007200}"#))
        #expect(try blocking { try registry.allLiveActivityTokens(LiveActivityTokenQuery(app: "example", kind: .update)) }.isEmpty)
        let again = try await post(s, "/v1/apps/example/live-activities/activities/act-1/update",
            #"{"content":{"content-state":{"score":"3-1"}}}"#)
        #expect(again.status == 404 && again.errorCode == "no_tokens")

        // 6. A broadcast channel: create (most recent message stored), broadcast, list, delete.
        let created = try await post(s, "/v1/apps/example/broadcast-channels", #"{"storagePolicy":"most-recent","label":"Lions v Bears"}"#)
        #expect(created.status == 201, "\(String(decoding: created.body, as: UTF8.self))")
        let channelId = try #require(created.json?["channelId"]?.stringValue)
        #expect(created.json?["storagePolicy"]?.stringValue == "most-recent")
        #expect(setup.simulator.channels(bundleId: "com.example.app").map(\.id) == [channelId])
        let path = "/v1/apps/example/broadcast-channels/" + channelId.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let shown = try await s.request("GET", path, key: "send")
        #expect(shown.status == 200 && shown.json?["storagePolicy"]?.stringValue == "most-recent")
        let sent = try await post(s, path + "/notifications",
            #"{"content":{"event":"update","content-state":{"score":"3-1"},"timestamp":1700000300},"expiration":1700090000}"#)
        #expect(sent.status == 200, "\(String(decoding: sent.body, as: UTF8.self))")
        #expect(sent.json?["uniqueId"]?.stringValue != nil)
        let broadcast = try #require(setup.simulator.received.last)
        #expect(broadcast.channelId == channelId)
        #expect(broadcast.request.pushType == .liveactivity && broadcast.request.expiration == 1700090000)
        #expect(try aps(broadcast) == JSONValue(parsing: #"{"content-state":{"score":"3-1"},"timestamp":1700000300,"event":"update"}"#))
        let listed = try await s.request("GET", "/v1/apps/example/broadcast-channels", key: "send")
        #expect(listed.json?["channels"]?.arrayValue?.compactMap { $0["channelId"]?.stringValue } == [channelId])
        #expect(listed.json?["channels"]?.arrayValue?.first?["label"]?.stringValue == "Lions v Bears")
        let deleted = try await s.request("DELETE", path, key: "send")
        #expect(deleted.status == 204)
        #expect(setup.simulator.channels(bundleId: "com.example.app").isEmpty)
        let read1 = try await registry.run { [registry = registry] _ in try registry.broadcastChannels(app: "example") }
        #expect(read1.isEmpty)
        let gone = try await post(s, path + "/notifications", #"{"content":{"event":"update","content-state":{"score":"4-1"}}}"#)
        #expect(gone.status == 404 && gone.errorCode == "unknown_channel")
        try await s.stop()
        try await setup.stop()
    }

    @Test func aNoStorageChannelRefusesAnExpirationWithApplesReason() async throws {
        let setup = try await Setup.make(tokenAuth: true)
        let (s, _) = try await setup.server()
        let created = try await post(s, "/v1/apps/example/broadcast-channels", #"{}"#)
        #expect(created.status == 201 && created.json?["storagePolicy"]?.stringValue == "no-storage")
        let channelId = try #require(created.json?["channelId"]?.stringValue)
        let path = "/v1/apps/example/broadcast-channels/" + channelId.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        // A label's limit counts Unicode code points, as the description's maxLength does: 200 Characters of a letter
        // with a combining mark are 400 code points (refused, nothing created); 200 code points are fine.
        let marked = String(repeating: "e\u{301}", count: 200)
        #expect(marked.count == 200 && marked.unicodeScalars.count == 400)
        let long = try await post(s, "/v1/apps/example/broadcast-channels", #"{"label":"\#(marked)"}"#)
        #expect(long.status == 400 && long.errorCode == "invalid_label", "\(String(decoding: long.body, as: UTF8.self))")
        #expect(setup.simulator.channels(bundleId: "com.example.app").count == 1)
        let fits = try await post(s, "/v1/apps/example/broadcast-channels", #"{"label":"\#(String(repeating: "e\u{301}", count: 100))"}"#)
        #expect(fits.status == 201)
        let refused = try await post(s, path + "/notifications",
            #"{"content":{"event":"end","content-state":{"score":"1-0"}},"expiration":1700090000}"#)
        #expect(refused.status == 422 && refused.errorCode == "apns_rejected")
        #expect(refused.json?["error"]?["message"]?.stringValue?.contains("BadExpirationDate") == true)
        let accepted = try await post(s, path + "/notifications", #"{"content":{"event":"end","content-state":{"score":"1-0"}},"expiration":0}"#)
        #expect(accepted.status == 200)
        try await s.stop()
        try await setup.stop()
    }

    @Test func invalidLiveActivityRequestsAre400sAndNothingIsStoredOrSent() async throws {
        let setup = try await Setup.make(tokenAuth: true)
        let (s, registry) = try await setup.server()
        let token = String(repeating: "c3", count: 32)
        let cases: [(String, String, String)] = [
            ("/v1/apps/example/live-activities/push-to-start-tokens", #"{"token":"\#(token)","attributesType":"ScoreAttributes"}"#, "invalid_installation"),
            ("/v1/apps/example/live-activities/push-to-start-tokens", #"{"token":"\#(token)","installation":"i","attributesType":"1Score"}"#, "invalid_attributesType"),
            ("/v1/apps/example/live-activities/update-tokens", #"{"token":"\#(token)"}"#, "invalid_activityId"),
            ("/v1/apps/example/live-activities/update-tokens", #"{"token":"zz","activityId":"a"}"#, "invalid_token"),
            ("/v1/apps/example/live-activities/start", #"{"all":true,"content":{"attributes-type":"S","attributes":{},"content-state":{}}}"#, "invalid_content"),
            ("/v1/apps/example/live-activities/start", #"{"content":{"attributes-type":"S","attributes":{},"content-state":{},"alert":{"title":"t","body":"b"}}}"#, "invalid_target"),
            ("/v1/apps/example/live-activities/activities/a1/update", #"{"content":{"content-state":{},"dismissal-date":5}}"#, "invalid_content"),
            ("/v1/apps/example/live-activities/activities/a1/update", #"{"content":{"content-state":{}},"priority":1}"#, "invalid_priority"),
            ("/v1/apps/example/live-activities/activities/a1/end", #"{"content":{"attributes":{}}}"#, "invalid_content"),
            // Above docs/openapi.yaml's maximum (schemathesis found it accepted; a stored job would have been created).
            ("/v1/apps/example/live-activities/activities/a1/end", #"{"content":{"dismissal-date":100000000000}}"#, "invalid_content"),
            ("/v1/apps/example/live-activities/activities/a1/end", #"{"content":{},"expiration":100000000000}"#, "invalid_expiration"),
            ("/v1/apps/example/live-activities/activities/a1/end", #"{"content":{},"at":100000000000}"#, "invalid_at"),
            // A null inside the critical-alert sound (schemathesis found it accepted).
            ("/v1/apps/example/live-activities/activities/a1/end",
             #"{"content":{"alert":{"title":"t","body":"b","sound":{"critical":false,"name":"","volume":null}}}}"#, "invalid_content"),
            ("/v1/apps/example/live-activities/activities/a1/update",
             #"{"content":{"content-state":{},"alert":{"title":"t","body":"b","sound":{"critical":null,"name":"a"}}}}"#, "invalid_content"),
            ("/v1/apps/example/broadcast-channels", #"{"storagePolicy":"forever"}"#, "invalid_storagePolicy"),
            ("/v1/apps/example/broadcast-channels/abcd/notifications", #"{"content":{"event":"start","content-state":{}}}"#, "invalid_content"),
        ]
        for (path, body, code) in cases {
            let key = path.contains("tokens") ? "reg" : "send"
            let r = try await post(s, path, key: key, body)
            #expect(r.status == 400 && r.errorCode == code, "\(path) \(body): \(r.status) \(String(decoding: r.body, as: UTF8.self))")
            if body.contains("100000000000") {
                #expect(String(decoding: r.body, as: UTF8.self).contains("99999999999"), "\(path) \(body): the message names the bound")
            }
        }
        #expect(try blocking { try registry.allLiveActivityTokens(LiveActivityTokenQuery(app: "example", kind: .pushToStart)) }.isEmpty)
        #expect(try blocking { try registry.allLiveActivityTokens(LiveActivityTokenQuery(app: "example", kind: .update)) }.isEmpty)
        let read2 = try await registry.run { [registry = registry] _ in try registry.broadcastChannels(app: "example") }
        #expect(read2.isEmpty)
        #expect(setup.simulator.received.isEmpty)
        #expect(setup.simulator.channels(bundleId: "com.example.app").isEmpty)
        // A registration key may not send.
        let forbidden = try await post(s, "/v1/apps/example/broadcast-channels", key: "reg", #"{}"#)
        #expect(forbidden.status == 403)
        try await s.stop()
        try await setup.stop()
    }

    @Test func anAppWithCertificateCredentialsIsToldLiveActivitiesNeedTokenAuth() async throws {
        let setup = try await Setup.make()  // .p12 credentials
        let (s, registry) = try await setup.server()
        let token = String(repeating: "d4", count: 32)
        let registered = try await post(s, "/v1/apps/example/live-activities/push-to-start-tokens", key: "reg",
            #"{"token":"\#(token)","installation":"inst-1","attributesType":"ScoreAttributes"}"#)
        #expect(registered.status == 201)  // registering is fine; sending is not
        let start = try await post(s, "/v1/apps/example/live-activities/start", #"""
            {"all":true,"content":{"attributes-type":"ScoreAttributes","attributes":{},"content-state":{},"alert":{"title":"t","body":"b"}}}
            """#)
        #expect(start.status == 409 && start.errorCode == "token_auth_required")
        #expect(start.json?["error"]?["message"]?.stringValue?.contains(".p8") == true)
        let read3 = try await registry.run { [registry = registry] _ in try registry.broadcasts(app: "example", states: BroadcastState.allCases) }
        #expect(read3.isEmpty)
        #expect(setup.simulator.received.isEmpty)
        // Broadcast channels work with certificates.
        let created = try await post(s, "/v1/apps/example/broadcast-channels", #"{}"#)
        #expect(created.status == 201)
        try await s.stop()
        try await setup.stop()
    }
}
