@testable import PushSimulator
import PushCore
import Testing

/// Every request rule, triggered over real HTTP/2 + TLS by a crafted request.
@Suite(.timeLimit(.minutes(2)))
struct RequestValidatorTests {
    struct Case {
        var name: String
        var request: H2TestClient.Request
        var status: Int
        var reason: String?
    }

    static let topic = SimulatorFixture.topic

    /// A JSON alert payload of exactly `size` bytes.
    static func payload(size: Int) -> String {
        let frame = #"{"aps":{"alert":""}}"#
        return #"{"aps":{"alert":""# + String(repeating: "x", count: size - frame.utf8.count) + #""}}"#
    }

    static let cases: [Case] = {
        let t = ("apns-topic", topic)
        return [
            Case(name: "accepted", request: notification(), status: 200, reason: nil),
            Case(name: "GET", request: notification(method: "GET"), status: 405, reason: "MethodNotAllowed"),
            Case(name: "other path", request: notification(path: "/3/devices/\(hexToken())"), status: 404, reason: "BadPath"),
            Case(name: "v4 path", request: notification(path: "/4/device/\(hexToken())"), status: 404, reason: "BadPath"),
            Case(name: "no token", request: notification(path: "/3/device/"), status: 400, reason: "MissingDeviceToken"),
            Case(name: "not hex", request: notification(token: String(repeating: "zz", count: 32)), status: 400, reason: "BadDeviceToken"),
            Case(name: "odd length", request: notification(token: hexToken() + "a"), status: 400, reason: "BadDeviceToken"),
            Case(name: "too short", request: notification(token: "abcdef"), status: 400, reason: "BadDeviceToken"),
            Case(name: "NSData form", request: notification(token: "<abcdef01%2023456789>"), status: 400, reason: "BadDeviceToken"),
            Case(name: "duplicate topic", request: notification(headers: [t, t]), status: 400, reason: "DuplicateHeaders"),
            Case(
                name: "duplicate apns-id",
                request: notification(headers: [t, ("apns-id", "123e4567-e89b-42d3-a456-426614174000"), ("apns-id", "123e4567-e89b-42d3-a456-426614174001")]),
                status: 400, reason: "DuplicateHeaders"),
            Case(name: "bad apns-id", request: notification(headers: [t, ("apns-id", "not-a-uuid")]), status: 400, reason: "BadMessageId"),
            Case(name: "bad expiration", request: notification(headers: [t, ("apns-expiration", "soon")]), status: 400, reason: "BadExpirationDate"),
            Case(name: "negative expiration", request: notification(headers: [t, ("apns-expiration", "-1")]), status: 400, reason: "BadExpirationDate"),
            Case(name: "bad priority", request: notification(headers: [t, ("apns-priority", "7")]), status: 400, reason: "BadPriority"),
            Case(name: "no topic", request: notification(headers: []), status: 400, reason: "MissingTopic"),
            Case(name: "empty topic", request: notification(headers: [("apns-topic", "")]), status: 400, reason: "BadTopic"),
            Case(name: "topic with space", request: notification(headers: [("apns-topic", "com.example app")]), status: 400, reason: "BadTopic"),
            Case(
                name: "collapse id 64 bytes", request: notification(headers: [t, ("apns-collapse-id", String(repeating: "c", count: 64))]),
                status: 200, reason: nil),
            Case(
                name: "collapse id 65 bytes", request: notification(headers: [t, ("apns-collapse-id", String(repeating: "c", count: 65))]),
                status: 400, reason: "BadCollapseId"),
            Case(name: "unknown push type", request: notification(headers: [t, ("apns-push-type", "banner")]), status: 400, reason: "InvalidPushType"),
            Case(name: "voip without .voip topic", request: notification(headers: [t, ("apns-push-type", "voip")]), status: 400, reason: "InvalidPushType"),
            Case(name: "empty payload", request: notification(body: ""), status: 400, reason: "PayloadEmpty"),
            Case(name: "not JSON", request: notification(body: "{aps"), status: 400, reason: "BadPayload"),
            Case(name: "4096 bytes", request: notification(body: payload(size: 4096)), status: 200, reason: nil),
            Case(name: "4097 bytes", request: notification(body: payload(size: 4097)), status: 413, reason: "PayloadTooLarge"),
            Case(
                name: "voip 5120 bytes",
                request: notification(headers: [("apns-topic", topic + ".voip"), ("apns-push-type", "voip")], body: payload(size: 5120)),
                status: 200, reason: nil),
            Case(
                name: "voip 5121 bytes",
                request: notification(headers: [("apns-topic", topic + ".voip"), ("apns-push-type", "voip")], body: payload(size: 5121)),
                status: 413, reason: "PayloadTooLarge"),
            Case(
                name: "background priority 5",
                request: notification(headers: [t, ("apns-push-type", "background"), ("apns-priority", "5")], body: #"{"aps":{"content-available":1}}"#),
                status: 200, reason: nil),
            Case(
                name: "background priority 10",
                request: notification(headers: [t, ("apns-push-type", "background"), ("apns-priority", "10")], body: #"{"aps":{"content-available":1}}"#),
                status: 400, reason: "BadPriority"),
            Case(
                name: "background without priority (defaults to 10)",
                request: notification(headers: [t, ("apns-push-type", "background")], body: #"{"aps":{"content-available":1}}"#),
                status: 400, reason: "BadPriority"),
            Case(
                name: "background with alert",
                request: notification(headers: [t, ("apns-push-type", "background"), ("apns-priority", "5")], body: #"{"aps":{"content-available":1,"alert":"x"}}"#),
                status: 400, reason: "InvalidPushType"),
            Case(
                name: "background without content-available",
                request: notification(headers: [t, ("apns-push-type", "background"), ("apns-priority", "5")], body: #"{"aps":{}}"#),
                status: 400, reason: "InvalidPushType"),
        ]
    }()

    @Test func everyRuleAnswersWithApplesStatusAndReason() async throws {
        try await SimulatorFixture.run(.none) { f in
            let client = try await f.connect()
            for c in Self.cases {
                let r = try await client.send(c.request)
                #expect(r.status == c.status, "\(c.name)")
                #expect(reasonOf(r) == c.reason, "\(c.name)")
                #expect(NotificationID.isValid(r.header("apns-id") ?? ""), "\(c.name): apns-id on every answer")
                #expect((r.header("apns-unique-id") != nil) == (c.status == 200), "\(c.name)")
                if c.status != 200 {
                    #expect(r.header("content-type") == "application/json", "\(c.name)")
                }
            }
            await client.close()
            let accepted = Self.cases.filter { $0.status == 200 }.count
            #expect(f.simulator.counters.accepted == accepted)
            #expect(f.simulator.counters.byReason["PayloadTooLarge"] == 2)
            #expect(f.simulator.counters.requests == Self.cases.count)
        }
    }

    /// A liveactivity request to `token` with `aps` as given.
    static func activity(_ aps: String, priority: String = "10", token: String = hexToken(0x51)) -> H2TestClient.Request {
        notification(
            token: token,
            headers: [
                ("apns-topic", topic + ".push-type.liveactivity"), ("apns-push-type", "liveactivity"),
                ("apns-priority", priority),
            ],
            body: #"{"aps":\#(aps)}"#)
    }

    static let liveActivityCases: [Case] = {
        let state = #""content-state":{"score":1}"#
        let ts = #""timestamp":1700000000"#
        let start = #""event":"start",\#(ts),\#(state),"attributes-type":"Match","attributes":{"home":"A"}"#
        return [
            Case(name: "update", request: activity(#"{"event":"update",\#(ts),\#(state)}"#), status: 200, reason: nil),
            Case(name: "update priority 5", request: activity(#"{"event":"update",\#(ts),\#(state)}"#, priority: "5"), status: 200, reason: nil),
            Case(name: "priority 1", request: activity(#"{"event":"update",\#(ts),\#(state)}"#, priority: "1"), status: 400, reason: "BadPriority"),
            Case(name: "start", request: activity("{\(start),\"input-push-token\":1}"), status: 200, reason: nil),
            Case(name: "start with channel", request: activity("{\(start),\"input-push-channel\":\"dGVzdA==\"}"), status: 200, reason: nil),
            Case(name: "start without attributes-type", request: activity(#"{"event":"start",\#(ts),\#(state),"attributes":{}}"#), status: 400, reason: "BadPayload"),
            Case(name: "start without attributes", request: activity(#"{"event":"start",\#(ts),\#(state),"attributes-type":"M"}"#), status: 400, reason: "BadPayload"),
            Case(name: "start attributes not an object", request: activity(#"{"event":"start",\#(ts),\#(state),"attributes-type":"M","attributes":1}"#), status: 400, reason: "BadPayload"),
            Case(name: "start without content-state", request: activity(#"{"event":"start",\#(ts),"attributes-type":"M","attributes":{}}"#), status: 400, reason: "BadPayload"),
            Case(name: "start with dismissal-date", request: activity("{\(start),\"dismissal-date\":1700003600}"), status: 400, reason: "BadPayload"),
            Case(name: "no event", request: activity(#"{\#(ts),\#(state)}"#), status: 400, reason: "BadPayload"),
            Case(name: "unknown event", request: activity(#"{"event":"pause",\#(ts),\#(state)}"#), status: 400, reason: "BadPayload"),
            Case(name: "no timestamp", request: activity(#"{"event":"update",\#(state)}"#), status: 400, reason: "BadPayload"),
            Case(name: "string timestamp", request: activity(#"{"event":"update","timestamp":"1700000000",\#(state)}"#), status: 400, reason: "BadPayload"),
            Case(name: "fractional timestamp", request: activity(#"{"event":"update","timestamp":1700000000.5,\#(state)}"#), status: 400, reason: "BadPayload"),
            Case(name: "update without content-state", request: activity(#"{"event":"update",\#(ts)}"#), status: 400, reason: "BadPayload"),
            Case(name: "content-state not an object", request: activity(#"{"event":"update",\#(ts),"content-state":[1]}"#), status: 400, reason: "BadPayload"),
            Case(name: "update with attributes", request: activity(#"{"event":"update",\#(ts),\#(state),"attributes":{}}"#), status: 400, reason: "BadPayload"),
            Case(name: "update with input-push-token", request: activity(#"{"event":"update",\#(ts),\#(state),"input-push-token":1}"#), status: 400, reason: "BadPayload"),
            Case(name: "update with dismissal-date", request: activity(#"{"event":"update",\#(ts),\#(state),"dismissal-date":1700003600}"#), status: 400, reason: "BadPayload"),
            Case(name: "update with stale-date", request: activity(#"{"event":"update",\#(ts),\#(state),"stale-date":1700003600}"#), status: 200, reason: nil),
            Case(name: "string stale-date", request: activity(#"{"event":"update",\#(ts),\#(state),"stale-date":"later"}"#), status: 400, reason: "BadPayload"),
            Case(name: "end without content-state", request: activity(#"{"event":"end",\#(ts),"dismissal-date":1700003600}"#, token: hexToken(0x61)), status: 200, reason: nil),
            Case(name: "end with attributes-type", request: activity(#"{"event":"end",\#(ts),"attributes-type":"M"}"#), status: 400, reason: "BadPayload"),
            Case(name: "string dismissal-date", request: activity(#"{"event":"end",\#(ts),"dismissal-date":"now"}"#), status: 400, reason: "BadPayload"),
            Case(name: "aps not an object", request: notification(headers: [("apns-topic", topic + ".push-type.liveactivity"), ("apns-push-type", "liveactivity")], body: #"{"aps":1}"#), status: 400, reason: "BadPayload"),
        ]
    }()

    @Test func liveActivityPayloadRules() async throws {
        try await SimulatorFixture.run(.none) { f in
            let client = try await f.connect()
            for c in Self.liveActivityCases {
                let r = try await client.send(c.request)
                #expect(r.status == c.status, "\(c.name)")
                #expect(reasonOf(r) == c.reason, "\(c.name)")
            }
            await client.close()
            #expect(f.simulator.counters.accepted == Self.liveActivityCases.filter { $0.status == 200 }.count)
        }
    }

    @Test func anEndedActivityAnswers410ToLaterUpdates() async throws {
        let now: Int64 = 1_700_000_123_456
        try await SimulatorFixture.run(.none, configure: { $0.clock = { now } }) { f in
            let client = try await f.connect()
            let token = hexToken(0x71)
            let update = Self.activity(#"{"event":"update","timestamp":1700000000,"content-state":{"s":1}}"#, token: token)
            let first = try await client.send(update)
            let end = try await client.send(Self.activity(#"{"event":"end","timestamp":1700000001}"#, token: token))
            let later = try await client.send(update)
            let laterEnd = try await client.send(Self.activity(#"{"event":"end","timestamp":1700000002}"#, token: token))
            // Other push types to the token and other tokens' activities are unaffected.
            let alert = try await client.send(notification(token: token))
            let other = try await client.send(Self.activity(#"{"event":"update","timestamp":1700000000,"content-state":{}}"#, token: hexToken(0x72)))
            await client.close()
            #expect(first.status == 200)
            #expect(end.status == 200)
            #expect(later.status == 410)
            #expect(reasonOf(later) == "Unregistered")
            #expect((try? JSONValue(parsing: later.body))?["timestamp"]?.intValue == now)
            #expect(laterEnd.status == 410)
            #expect(alert.status == 200)
            #expect(other.status == 200)
            #expect(f.simulator.activityEnded(try DeviceToken(parsing: token)) == now)
        }
    }

    @Test func echoesTheRequestApnsIdOnRejections() async throws {
        try await SimulatorFixture.run(.none) { f in
            let client = try await f.connect()
            let id = "123e4567-e89b-42d3-a456-426614174000"
            let r = try await client.send(notification(headers: [("apns-id", id)]))
            await client.close()
            #expect(r.status == 400)
            #expect(reasonOf(r) == "MissingTopic")
            #expect(r.header("apns-id") == id)
        }
    }

    @Test func rejectsAnOversizedBodyBeforeItEnds() async throws {
        try await SimulatorFixture.run(.none) { f in
            let client = try await f.connect()
            let r = try await client.send(notification(body: Self.payload(size: 60_000)))
            let after = try await client.send(notification())
            await client.close()
            #expect(r.status == 413)
            #expect(reasonOf(r) == "PayloadTooLarge")
            #expect(after.status == 200)
        }
    }
}

@Suite struct JSONSyntaxTests {
    @Test func acceptsExactlyOneObject() {
        let good = [
            "{}", " { } ", #"{"aps":{"alert":"hi","badge":1}}"#, #"{"a":[1,-2.5e3,true,false,null,"\u00e9\n"]}"#,
            #"{"a":{"b":{"c":[]}}}"#, #"{"x":0.5,"y":-0,"z":1E+2}"#,
        ]
        let bad = [
            "", "[]", "\"x\"", "1", "{", "{aps", #"{"a":}"#, #"{"a":1,}"#, #"{"a" 1}"#, #"{"a":01}"#, #"{"a":1.}"#,
            #"{"a":"\x"}"#, "{\"a\":\"\u{01}\"}", #"{} {}"#, #"{"a":tru}"#, #"{"a":[1,]}"#, #"{'a':1}"#,
        ]
        for text in good { #expect(JSONSyntax.isObject(Array(text.utf8)), "\(text)") }
        for text in bad { #expect(!JSONSyntax.isObject(Array(text.utf8)), "\(text)") }
    }
}

/// HTTP/2 header-block rules (RFC 9113 §8.2–8.3): a malformed block resets the stream, as any HTTP/2 server does.
@Suite(.timeLimit(.minutes(2)))
struct MalformedHeaderTests {
    @Test func malformedHeaderBlocksResetTheStream() async throws {
        try await SimulatorFixture.run(.none) { f in
            let client = try await f.connect()
            let topic = ("apns-topic", SimulatorFixture.topic)
            let cases: [[(String, String)]] = [
                [topic, ("Apns-Priority", "10")], [topic, ("connection", "keep-alive")], [topic, ("te", "gzip")],
                [topic, (":bogus", "x")],
            ]
            for headers in cases {
                let r = try await client.send(notification(headers: headers))
                #expect(r.resetCode == .protocolError, "\(headers)")
                #expect(r.status == nil, "\(headers)")
            }
            let fine = try await client.send(notification(headers: [topic, ("te", "trailers")]))
            await client.close()
            #expect(fine.status == 200)
            #expect(f.simulator.counters.malformedStreams == cases.count)
            #expect(f.simulator.counters.requests == 1)
        }
    }
}
