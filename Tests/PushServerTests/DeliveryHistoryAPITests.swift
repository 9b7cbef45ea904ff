import Foundation
import PushCore
import PushStore
import Testing

/// `GET /v1/apps/{app}/deliveries` over a real socket: the items, newest first, paged by the opaque cursor,
/// the filters, send keys only, and a 400 naming each bad parameter.
@Suite(.timeLimit(.minutes(2))) struct DeliveryHistoryAPITests {
    static let tokens = (1...3).map { try! DeviceToken(parsing: String(repeating: "0\($0)", count: 32)) }

    /// Five rows of `example` (and one of `other`): time 1…5 s after 2026-11-24T08:00:00Z.
    static func seed(_ registry: any RegistryStore) throws {
        let base: Int64 = 1_795_507_200_000  // 2026-11-24T08:00:00Z
        func row(_ n: Int64, _ token: DeviceToken, _ kind: DeliveryOutcome.Kind, _ status: Int, _ reason: String?, _ broadcast: String?, app: String = "example") -> DeliveryRecord {
            DeliveryRecord(app: app, notificationId: "00000000-0000-0000-0000-00000000000\(n)", token: token, status: status, reason: reason,
                           attempts: 1, possiblyDuplicated: false, firstAttemptMs: base + n * 1000 - 10,
                           finishedMs: base + n * 1000, kind: kind, broadcastId: broadcast)
        }
        try registry.recordDeliveries([
            row(1, tokens[0], .accepted, 200, nil, "digest"),
            row(2, tokens[1], .tokenDead, 410, "Unregistered", "digest"),
            row(3, tokens[2], .deferred, 0, "ServiceUnavailable", "digest"),
            row(4, tokens[0], .rejected, 400, "BadTopic", nil),
            row(5, tokens[0], .accepted, 200, nil, nil),
            row(6, tokens[1], .accepted, 200, nil, nil, app: "other"),
        ])
    }

    @Test func pagesComeNewestFirstThroughTheCursorWithFullTokens() async throws {
        let s = try await TestServer.start()
        try Self.seed(s.store)
        var items: [JSONValue] = []
        var path = "/v1/apps/example/deliveries?limit=2"
        var pages = 0
        while true {
            let reply = try await s.request("GET", path, key: TestServer.sendKey)
            #expect(reply.status == 200)
            let json = try #require(reply.json)
            items += try #require(json["deliveries"]?.elements)
            pages += 1
            guard let cursor = json["nextCursor"]?.stringValue else {
                #expect(json["nextCursor"] == .null)
                break
            }
            path = "/v1/apps/example/deliveries?limit=2&cursor=\(cursor)"
        }
        #expect(pages == 3)
        #expect(items.count == 5)
        #expect(items.first == .object([
            ("token", .string(Self.tokens[0].hex)), ("status", .string("accepted")), ("reason", .null),
            ("notificationId", .string("00000000-0000-0000-0000-000000000005")), ("apnsId", .string("00000000-0000-0000-0000-000000000005")), ("broadcast", .null),
            ("time", .string("2026-11-24T08:00:05.000Z")), ("httpStatus", .int(200)), ("attempts", .int(1)),
            ("service", .string("apns")),
        ]))
        #expect(items[3] == .object([
            ("token", .string(Self.tokens[1].hex)), ("status", .string("tokenDead")), ("reason", .string("Unregistered")),
            ("notificationId", .string("00000000-0000-0000-0000-000000000002")), ("apnsId", .string("00000000-0000-0000-0000-000000000002")), ("broadcast", .string("digest")),
            ("time", .string("2026-11-24T08:00:02.000Z")), ("httpStatus", .int(410)), ("attempts", .int(1)),
            ("service", .string("apns")),
        ]))
        #expect(items.compactMap { $0["time"]?.stringValue } == (1...5).reversed().map { "2026-11-24T08:00:0\($0).000Z" })
        try await s.stop()
    }

    @Test func filtersNarrowTheHistory() async throws {
        let s = try await TestServer.start()
        try Self.seed(s.store)
        func notificationIds(_ query: String) async throws -> [String] {
            let reply = try await s.request("GET", "/v1/apps/example/deliveries?\(query)", key: TestServer.sendKey)
            #expect(reply.status == 200, "\(query): \(String(decoding: reply.body, as: UTF8.self))")
            return (reply.json?["deliveries"]?.elements ?? []).compactMap { $0["apnsId"]?.stringValue.map { String($0.suffix(1)) } }
        }
        #expect(try await notificationIds("token=\(Self.tokens[0].hex)") == ["5", "4", "1"])
        #expect(try await notificationIds("broadcast=digest") == ["3", "2", "1"])
        #expect(try await notificationIds("status=deferred") == ["3"])
        #expect(try await notificationIds("since=2026-11-24T08:00:04Z") == ["5", "4"])
        #expect(try await notificationIds("since=1795507203") == ["5", "4", "3"])
        #expect(try await notificationIds("since=2026-11-24T09:00:02%2B01:00&broadcast=digest") == ["3", "2"])
        #expect(try await notificationIds("token=\(Self.tokens[0].hex)&status=accepted") == ["5", "1"])
        try await s.stop()
    }

    @Test func badParametersAre400NamingTheParameterAndOnlySendKeysMayRead() async throws {
        let s = try await TestServer.start()
        for (query, code) in [
            ("since=yesterday", "invalid_since"), ("since=2026-11-24%2008:00:00Z", "invalid_since"),
            ("since=123456789012", "invalid_since"), ("status=lost", "invalid_status"), ("limit=0", "invalid_limit"),
            ("limit=1001", "invalid_limit"), ("limit=ten", "invalid_limit"), ("cursor=abc", "invalid_cursor"),
            ("token=zz", "invalid_token"),
        ] {
            let reply = try await s.request("GET", "/v1/apps/example/deliveries?\(query)", key: TestServer.sendKey)
            #expect(reply.status == 400 && reply.errorCode == code, "\(query)")
            let parameter = String(code.dropFirst("invalid_".count))
            #expect(reply.json?["error"]?["message"]?.stringValue?.hasPrefix(parameter) == true, "\(query)")
        }
        #expect(try await s.request("GET", "/v1/apps/example/deliveries", key: TestServer.registrationKey).status == 403)
        #expect(try await s.request("GET", "/v1/apps/example/deliveries").status == 401)
        #expect(try await s.request("GET", "/v1/apps/example/deliveries", key: TestServer.otherSendKey).status == 403)
        try await s.stop()
    }
}

extension JSONValue {
    /// The elements of an array, else nil.
    fileprivate var elements: [JSONValue]? {
        guard case .array(let values) = self else { return nil }
        return values
    }
}
