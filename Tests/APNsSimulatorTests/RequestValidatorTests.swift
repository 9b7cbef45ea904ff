import APNsSimulator
import PushCore
import Testing

/// Every request rule, triggered over real HTTP/2 + TLS by a crafted request.
@Suite(.timeLimit(.minutes(1)))
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
                #expect(APNsID.isValid(r.header("apns-id") ?? ""), "\(c.name): apns-id on every answer")
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
