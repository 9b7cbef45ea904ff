@testable import PushSimulator
import Foundation
import PushCore
import Testing

/// Broadcast channels (channel management and `/4/broadcasts`), every rule over real HTTP/2 + TLS.
@Suite(.timeLimit(.minutes(2)))
struct ChannelRequestValidatorTests {
    static let bundle = SimulatorFixture.topic
    static let channels = "/1/apps/\(bundle)/channels"
    static let broadcasts = "/4/broadcasts/apps/\(bundle)"
    static let update = #"{"aps":{"event":"update","timestamp":1700000000,"content-state":{"score":"1-0"}}}"#

    static func request(
        _ method: String, _ path: String, _ headers: [(String, String)] = [], body: String = ""
    ) -> H2TestClient.Request {
        H2TestClient.Request(method: method, path: path, headers: headers, body: Array(body.utf8))
    }

    static func create(_ policy: Int = 1, pushType: String = "LiveActivity") -> H2TestClient.Request {
        request("POST", channels, body: #"{"message-storage-policy":\#(policy),"push-type":"\#(pushType)"}"#)
    }

    static func broadcast(_ channel: String?, _ extra: [(String, String)] = [], body: String = update) -> H2TestClient.Request {
        var headers = [("apns-push-type", "liveactivity"), ("apns-priority", "10")]
        if let channel { headers.append(("apns-channel-id", channel)) }
        return request("POST", broadcasts, headers + extra, body: body)
    }

    static func json(_ r: H2TestClient.Response) -> JSONValue? { try? JSONValue(parsing: r.body) }

    @Test func managesChannelsAndBroadcastsWithApplesAnswers() async throws {
        try await SimulatorFixture.run(.none, configure: { $0.maxChannelsPerBundleId = 2 }) { f in
            let client = try await f.connect()
            let requestId = "123e4567-e89b-42d3-a456-426614174000"
            var withId = Self.create(1)
            withId.headers.append(("apns-request-id", requestId))
            let created = try await client.send(withId)
            let second = try await client.send(Self.create(0))
            let full = try await client.send(Self.create(1))
            #expect(created.status == 201)
            #expect(created.header("apns-request-id") == requestId)
            let stored = try #require(created.header("apns-channel-id"))
            let noStorage = try #require(second.header("apns-channel-id"))
            #expect(Data(base64Encoded: stored)?.count == 16)
            #expect(stored != noStorage)
            #expect(second.status == 201)
            #expect(NotificationID.isValid(second.header("apns-request-id") ?? ""))
            #expect(full.status == 400)
            #expect(reasonOf(full) == "CannotCreateChannelConfig")
            #expect(f.simulator.channels(bundleId: Self.bundle) == [
                SimulatorChannel(id: stored, policy: .mostRecent), SimulatorChannel(id: noStorage, policy: .noStorage),
            ])

            let info = try await client.send(Self.request("GET", Self.channels, [("apns-channel-id", noStorage)]))
            #expect(info.status == 200)
            #expect(info.header("content-type") == "application/json")
            #expect(Self.json(info) == .object([("message-storage-policy", .int(0)), ("push-type", .string("LiveActivity"))]))
            let list = try await client.send(Self.request("GET", "/1/apps/\(Self.bundle)/all-channels"))
            #expect(list.status == 200)
            #expect(Self.json(list) == .object([("channels", .array([.string(stored), .string(noStorage)]))]))
            let otherApp = try await client.send(Self.request("GET", "/1/apps/com.example.other/all-channels"))
            #expect(Self.json(otherApp) == .object([("channels", .array([]))]))

            // Broadcasts.
            let sent = try await client.send(Self.broadcast(stored, [("apns-expiration", "1900000000"), ("apns-request-id", requestId)]))
            #expect(sent.status == 200)
            #expect(sent.header("apns-request-id") == requestId)
            #expect(NotificationID.isValid(sent.header("apns-unique-id") ?? ""))
            #expect(sent.body.isEmpty)
            let deliverNow = try await client.send(Self.broadcast(noStorage, [("apns-expiration", "0")]).replacing("apns-priority", "5"))
            #expect(deliverNow.status == 200)
            let received = f.simulator.received
            #expect(received.count == 2)
            let first = try #require(received.first)
            #expect(first.channelId == stored)
            #expect(first.request.topic == Self.bundle)
            #expect(first.request.pushType == .liveactivity)
            #expect(first.request.priority == .immediate)
            #expect(first.request.expiration == 1_900_000_000)
            #expect(first.request.notificationId == requestId)
            #expect(try JSONValue(parsing: first.request.payload) == JSONValue(parsing: Array(Self.update.utf8)))
            #expect(received.last?.request.priority == .conserve)
            // The --record line: channelId set, token null; device sends keep every key and get channelId null.
            var line: [UInt8] = []
            first.jsonLine(into: &line)
            let record = try JSONValue(parsing: line)
            #expect(record["channelId"] == .string(stored))
            #expect(record["token"] == .null)
            #expect(record["payload"] == (try JSONValue(parsing: Array(Self.update.utf8))))

            // Deleting.
            let deleted = try await client.send(Self.request("DELETE", Self.channels, [("apns-channel-id", stored)]))
            #expect(deleted.status == 204)
            #expect(deleted.body.isEmpty)
            let again = try await client.send(Self.request("DELETE", Self.channels, [("apns-channel-id", stored)]))
            #expect(reasonOf(again) == "ChannelNotRegistered")
            let gone = try await client.send(Self.broadcast(stored))
            #expect(reasonOf(gone) == "ChannelNotRegistered")
            let recreated = try await client.send(Self.create(1))
            #expect(recreated.status == 201)
            await client.close()
        }
    }

    struct Case {
        var name: String
        var request: H2TestClient.Request
        var status: Int
        var reason: String
    }

    /// Every rejection, with `stored` a most-recent channel and `noStorage` a no-storage one.
    static func cases(stored: String, noStorage: String) -> [Case] {
        let unknown = Data(repeating: 7, count: 16).base64EncodedString()
        let id = ("apns-channel-id", stored)
        return [
            Case(name: "PUT channels", request: request("PUT", channels, [id]), status: 405, reason: "MethodNotAllowed"),
            Case(name: "POST all-channels", request: request("POST", "/1/apps/\(bundle)/all-channels", body: "{}"), status: 405, reason: "MethodNotAllowed"),
            Case(name: "DELETE all-channels", request: request("DELETE", "/1/apps/\(bundle)/all-channels"), status: 405, reason: "MethodNotAllowed"),
            Case(name: "GET broadcast", request: request("GET", broadcasts, [id]), status: 405, reason: "MethodNotAllowed"),
            Case(name: "unknown resource", request: request("GET", "/1/apps/\(bundle)/channel"), status: 404, reason: "BadPath"),
            Case(name: "no bundle id", request: request("GET", "/1/apps//channels", [id]), status: 404, reason: "BadPath"),
            Case(name: "extra segment", request: request("GET", channels + "/x", [id]), status: 404, reason: "BadPath"),
            Case(name: "broadcast without bundle id", request: request("POST", "/4/broadcasts/apps/", body: update), status: 404, reason: "BadPath"),
            Case(name: "duplicate channel id", request: request("GET", channels, [id, id]), status: 400, reason: "DuplicateHeaders"),
            Case(name: "bad request id", request: request("GET", channels, [id, ("apns-request-id", "nope")]), status: 400, reason: "BadMessageId"),
            Case(name: "read without channel id", request: request("GET", channels), status: 400, reason: "MissingChannelId"),
            Case(name: "delete without channel id", request: request("DELETE", channels), status: 400, reason: "MissingChannelId"),
            Case(name: "read bad channel id", request: request("GET", channels, [("apns-channel-id", "not base64!")]), status: 400, reason: "BadChannelId"),
            Case(name: "read unpadded channel id", request: request("GET", channels, [("apns-channel-id", "abc")]), status: 400, reason: "BadChannelId"),
            Case(name: "read unknown channel", request: request("GET", channels, [("apns-channel-id", unknown)]), status: 400, reason: "ChannelNotRegistered"),
            Case(name: "delete unknown channel", request: request("DELETE", channels, [("apns-channel-id", unknown)]), status: 400, reason: "ChannelNotRegistered"),
            Case(name: "create without body", request: request("POST", channels), status: 400, reason: "PayloadEmpty"),
            Case(name: "create with bad JSON", request: request("POST", channels, body: "{"), status: 400, reason: "BadPayload"),
            Case(name: "create with policy 2", request: create(2), status: 400, reason: "BadMessageStoragePolicy"),
            Case(name: "create with policy as text", request: request("POST", channels, body: #"{"message-storage-policy":"1","push-type":"LiveActivity"}"#), status: 400, reason: "BadMessageStoragePolicy"),
            Case(name: "create without policy", request: request("POST", channels, body: #"{"push-type":"LiveActivity"}"#), status: 400, reason: "BadMessageStoragePolicy"),
            Case(name: "create for alerts", request: create(1, pushType: "Alert"), status: 400, reason: "InvalidPushType"),
            Case(name: "create without push type", request: request("POST", channels, body: #"{"message-storage-policy":1}"#), status: 400, reason: "InvalidPushType"),
            Case(name: "broadcast without channel id", request: broadcast(nil), status: 400, reason: "MissingChannelId"),
            Case(name: "broadcast bad channel id", request: broadcast("%%%"), status: 400, reason: "BadChannelId"),
            Case(name: "broadcast unknown channel", request: broadcast(unknown), status: 400, reason: "ChannelNotRegistered"),
            Case(name: "broadcast alert", request: request("POST", broadcasts, [id, ("apns-push-type", "alert")], body: update), status: 400, reason: "InvalidPushType"),
            Case(name: "broadcast without push type", request: request("POST", broadcasts, [id], body: update), status: 400, reason: "InvalidPushType"),
            Case(name: "broadcast priority 1", request: broadcast(stored, [("apns-priority", "1")]).replacing("apns-priority", "1"), status: 400, reason: "BadPriority"),
            Case(name: "broadcast bad expiration", request: broadcast(stored, [("apns-expiration", "soon")]), status: 400, reason: "BadExpirationDate"),
            Case(name: "expiration on a no-storage channel", request: broadcast(noStorage, [("apns-expiration", "1900000000")]), status: 400, reason: "BadExpirationDate"),
            Case(name: "broadcast empty", request: broadcast(stored, body: ""), status: 400, reason: "PayloadEmpty"),
            Case(name: "broadcast too large", request: broadcast(stored, body: #"{"aps":{"event":"update","timestamp":1,"content-state":{"x":""# + String(repeating: "x", count: 4100) + #""}}}"#), status: 413, reason: "PayloadTooLarge"),
            Case(name: "broadcast not JSON", request: broadcast(stored, body: "{aps"), status: 400, reason: "BadPayload"),
            Case(name: "broadcast without content-state", request: broadcast(stored, body: #"{"aps":{"event":"update","timestamp":1}}"#), status: 400, reason: "BadPayload"),
        ]
    }

    @Test func everyRejectionAnswersWithApplesStatusAndReason() async throws {
        try await SimulatorFixture.run(.none) { f in
            let client = try await f.connect()
            let stored = try #require(try await client.send(Self.create(1)).header("apns-channel-id"))
            let noStorage = try #require(try await client.send(Self.create(0)).header("apns-channel-id"))
            let cases = Self.cases(stored: stored, noStorage: noStorage)
            for c in cases {
                let r = try await client.send(c.request)
                #expect(r.status == c.status, "\(c.name)")
                #expect(reasonOf(r) == c.reason, "\(c.name)")
                #expect(r.header("content-type") == "application/json", "\(c.name)")
                #expect(NotificationID.isValid(r.header("apns-request-id") ?? ""), "\(c.name): apns-request-id on every answer")
            }
            await client.close()
            #expect(f.simulator.counters.accepted == 0)
            #expect(f.simulator.channels(bundleId: Self.bundle).count == 2)
        }
    }

    @Test func bundleWithoutTheBroadcastCapabilityIsRefused() async throws {
        try await SimulatorFixture.run(.none, configure: { $0.broadcastDisabledBundleIds = ["com.example.off"] }) { f in
            let client = try await f.connect()
            let create = try await client.send(
                Self.request("POST", "/1/apps/com.example.off/channels", body: #"{"message-storage-policy":1,"push-type":"LiveActivity"}"#))
            let list = try await client.send(Self.request("GET", "/1/apps/com.example.off/all-channels"))
            let send = try await client.send(
                Self.request("POST", "/4/broadcasts/apps/com.example.off", [("apns-channel-id", "AAAA"), ("apns-push-type", "liveactivity")], body: Self.update))
            let enabled = try await client.send(Self.create(1))
            await client.close()
            for r in [create, list, send] {
                #expect(r.status == 400)
                #expect(reasonOf(r) == "FeatureNotEnabled")
            }
            #expect(enabled.status == 201)
        }
    }

    @Test func certificatesOnlyReachTheirOwnBundleIds() async throws {
        try await SimulatorFixture.run(.certificate) { f in
            let client = try await f.connect()
            let own = try await client.send(Self.create(1))
            let other = try await client.send(
                Self.request("POST", "/1/apps/com.example.other/channels", body: #"{"message-storage-policy":1,"push-type":"LiveActivity"}"#))
            let otherList = try await client.send(Self.request("GET", "/1/apps/com.example.other/all-channels"))
            await client.close()
            #expect(own.status == 201)
            #expect(reasonOf(other) == "TopicDisallowed")
            #expect(reasonOf(otherList) == "TopicDisallowed")
            #expect(f.simulator.channels(bundleId: "com.example.other").isEmpty)
        }
    }

    @Test func channelIdsAreStandardBase64() {
        for good in ["AAAA", "dHN0LXNyY2gtY2hubA==", Data(repeating: 0xff, count: 16).base64EncodedString()] {
            #expect(ChannelRequestValidator.isBase64(good), "\(good)")
        }
        for bad in ["", "abc", "a===", "ab=c", "ab-_", "AAAA AAAA", String(repeating: "A", count: 260)] {
            #expect(!ChannelRequestValidator.isBase64(bad), "\(bad)")
        }
        var rng = FastRandom()
        for _ in 0..<100 {
            let id = SimulatorConnectionHandler.newChannelId(&rng)
            #expect(Data(base64Encoded: id)?.count == 16)
            #expect(id == Data(base64Encoded: id)?.base64EncodedString())
        }
    }
}

extension H2TestClient.Request {
    /// This request with header `name` set to `value` only (any earlier value removed).
    func replacing(_ name: String, _ value: String) -> H2TestClient.Request {
        var copy = self
        copy.headers.removeAll { $0.0 == name }
        copy.headers.append((name, value))
        return copy
    }
}
