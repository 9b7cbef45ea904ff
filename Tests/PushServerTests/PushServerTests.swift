import Foundation
import PushCore
import PushServer
import PushStore
import Testing
import TestSupport

@Suite(.timeLimit(.minutes(2))) struct PushServerTests {
    static let seedOld = "<740f4707 bebcf74f 9b7c25d4 8e335894 5f6aa01d a5ddb387 462c7eaf 61bb78ad>"
    static let seedOldHex = "740f4707bebcf74f9b7c25d48e3358945f6aa01da5ddb387462c7eaf61bb78ad"
    static let seedNew = "<11112222 33334444 55556666 77778888 9999aaaa bbbbcccc ddddeeee ffff0000>"
    static let seedNewHex = "111122223333444455556666777788889999aaaabbbbccccddddeeeeffff0000"

    @Test func seedClientFormBodyRegistersAndReplaces() async throws {
        let s = try await TestServer.start()
        // First launch: the client has no old token, and `%@` of nil prints (null).
        let first = try await s.request(
            "POST", "/v1/apps/example/devices", key: TestServer.registrationKey,
            contentType: "application/x-www-form-urlencoded", body: "oldToken=(null)&newToken=\(Self.seedOld)")
        #expect(first.status == 201)
        #expect(first.json?["token"]?.stringValue == Self.seedOldHex)
        #expect(first.json?["environment"]?.stringValue == "development")
        // Token changed: old and new, percent-encoded this time.
        let encodedOld = Self.seedOld.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let encodedNew = Self.seedNew.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let second = try await s.request(
            "POST", "/v1/apps/example/devices", key: TestServer.registrationKey,
            contentType: "application/x-www-form-urlencoded", body: "oldToken=\(encodedOld)&newToken=\(encodedNew)")
        #expect(second.status == 200)
        #expect(second.json?["outcome"]?.stringValue == "replaced")
        #expect(second.json?["token"]?.stringValue == Self.seedNewHex)
        let devices = try blocking { try s.registry.list(app: "example") }
        #expect(devices.map(\.token.hex) == [Self.seedNewHex])
        try await s.stop()
    }

    @Test func jsonRegistrationWithChannelsIsIdempotent() async throws {
        let s = try await TestServer.start()
        let token = String(repeating: "ab", count: 32)
        let body = #"{"token":"\#(token.uppercased())","channels":["news","photos"]}"#
        let first = try await s.request("POST", "/v1/apps/example/devices", key: TestServer.registrationKey, contentType: "application/json", body: body)
        #expect(first.status == 201)
        #expect(first.json?["channels"] == .array([.string("news"), .string("photos")]))
        let again = try await s.request("POST", "/v1/apps/example/devices", key: TestServer.sendKey, contentType: "application/json; charset=utf-8", body: body)
        #expect(again.status == 200)
        #expect(again.json?["outcome"]?.stringValue == "updated")
        let count = try await s.request("GET", "/v1/apps/example/devices/count?channel=news", key: TestServer.sendKey)
        #expect(count.status == 200)
        #expect(count.json == .object([("count", .int(1))]))
        try await s.stop()
    }

    @Test func badInputIsRejectedAndNothingIsStored() async throws {
        let s = try await TestServer.start()
        let cases: [(String?, String, Int, String)] = [
            ("application/json", #"{"token":"xyz"}"#, 400, "invalid_token"),
            ("application/json", #"{"token":42}"#, 400, "invalid_token"),
            ("application/json", #"{"token":"\#(String(repeating: "ab", count: 32))","oldToken":"nothex!"}"#, 400, "invalid_oldToken"),
            ("application/json", #"{"token":"\#(String(repeating: "ab", count: 32))","channels":"news"}"#, 400, "invalid_channels"),
            ("application/json", #"{"token":"\#(String(repeating: "ab", count: 32))","environment":"staging"}"#, 400, "invalid_environment"),
            ("application/json", #"{"token":"\#(String(repeating: "ab", count: 32))","extra":1}"#, 400, "invalid_field"),
            ("application/json", #"{"token":"#, 400, "invalid_json"),
            ("application/x-www-form-urlencoded", "oldToken=(null)", 400, "invalid_token"),
            ("text/plain", "newToken=\(String(repeating: "ab", count: 32))", 415, "unsupported_media_type"),
            ("application/json", #"{"token":"\#(String(repeating: "a", count: 17 * 1024))"}"#, 413, "body_too_large"),
        ]
        for (type, body, status, code) in cases {
            let r = try await s.request("POST", "/v1/apps/example/devices", key: TestServer.registrationKey, contentType: type, body: body)
            #expect(r.status == status, "\(body.prefix(60))")
            #expect(r.errorCode == code, "\(body.prefix(60))")
            #expect(r.json?["error"]?["message"]?.stringValue?.isEmpty == false)
        }
        let read1 = try await s.registry.run { [registry = s.registry] _ in try registry.count(app: "example") }
        #expect(read1 == 0)
        try await s.stop()
    }

    @Test func keysAreScopedToAppAndKind() async throws {
        let s = try await TestServer.start()
        let body = #"{"token":"\#(String(repeating: "cd", count: 32))"}"#
        let missing = try await s.request("POST", "/v1/apps/example/devices", contentType: "application/json", body: body)
        #expect(missing.status == 401)
        #expect(missing.headers["www-authenticate"] == "Bearer")
        let wrong = try await s.request("POST", "/v1/apps/example/devices", key: "nope", contentType: "application/json", body: body)
        #expect(wrong.status == 401)
        let otherApp = try await s.request("POST", "/v1/apps/example/devices", key: TestServer.otherSendKey, contentType: "application/json", body: body)
        #expect(otherApp.status == 403)
        let registrationCounting = try await s.request("GET", "/v1/apps/example/devices/count", key: TestServer.registrationKey)
        #expect(registrationCounting.status == 403)
        let unknownApp = try await s.request("GET", "/v1/apps/nope/devices/count", key: TestServer.sendKey)
        #expect(unknownApp.status == 404)
        let read2 = try await s.registry.run { [registry = s.registry] _ in try registry.count(app: "example") }
        #expect(read2 == 0)
        try await s.stop()
    }

    @Test func unregisterThenNotFound() async throws {
        let s = try await TestServer.start()
        let token = String(repeating: "ef", count: 32)
        _ = try await s.request("POST", "/v1/apps/example/devices", key: TestServer.registrationKey, contentType: "application/json", body: #"{"token":"\#(token)"}"#)
        let gone = try await s.request("DELETE", "/v1/apps/example/devices/\(token)", key: TestServer.registrationKey)
        #expect(gone.status == 204)
        let again = try await s.request("DELETE", "/v1/apps/example/devices/\(token)", key: TestServer.registrationKey)
        #expect(again.status == 404)
        #expect(again.errorCode == "unknown_device")
        let bad = try await s.request("DELETE", "/v1/apps/example/devices/zz", key: TestServer.registrationKey)
        #expect(bad.status == 400)
        try await s.stop()
    }

    @Test func rateLimitAnswers429WithRetryAfter() async throws {
        let s = try await TestServer.start(rate: 0.001, burst: 2)  // no refill while the test runs, however slow
        var statuses: [Int] = []
        var retryAfter: String?
        for _ in 0..<4 {
            let r = try await s.request("GET", "/v1/apps/example/devices/count", key: TestServer.sendKey)
            statuses.append(r.status)
            if r.status == 429 { retryAfter = r.headers["retry-after"] }
        }
        #expect(statuses.prefix(2).allSatisfy { $0 == 200 })
        #expect(statuses.last == 429)
        #expect(Int(retryAfter ?? "") ?? 0 >= 1)
        try await s.stop()
    }

    /// Transport error texts (quotes, newlines, host names) and reasons Apple may add never reach a label: the
    /// delivery series stay few, and every line of /metrics is a sample or a comment.
    @Test func metricsLabelsAreBoundedAndEscaped() async throws {
        let s = try await TestServer.start()
        let token = try DeviceToken(parsing: String(repeating: "ab", count: 32))
        func record(_ status: Int, _ reason: String?) -> DeliveryRecord {
            DeliveryRecord(
                app: "example", notificationId: "00000000-0000-0000-0000-000000000001", token: token, status: status,
                reason: reason, attempts: 1, possiblyDuplicated: false, firstAttemptMs: 1, finishedMs: 2)
        }
        let rows = [
            record(0, "TLS with https://127.0.0.1:1 failed: \"quoted\"\nsecond line \\ end"),
            record(0, "connection lost 10 times: Recv failure: Connection reset by peer"),
            record(400, "SomethingAppleAddsLater"),
            record(400, "BadDeviceToken"),
            record(200, nil),
        ]
        try await s.registry.run { [registry = s.registry] _ in try registry.recordDeliveries(rows) }
        let metrics = try await s.request("GET", "/metrics")
        let text = String(decoding: metrics.body, as: UTF8.self)
        #expect(text.contains(#"pushprovider_deliveries_total{app="example",service="apns",status="0",reason="transportError"} 2"#))
        #expect(text.contains(#"pushprovider_deliveries_total{app="example",service="apns",status="400",reason="unknown"} 1"#))
        #expect(text.contains(#"pushprovider_deliveries_total{app="example",service="apns",status="400",reason="BadDeviceToken"} 1"#))
        #expect(text.contains(#"pushprovider_deliveries_total{app="example",service="apns",status="200",reason=""} 1"#))
        #expect(!text.contains("quoted") && !text.contains("Connection reset"))
        // name{label="value",…} number — values without a bare quote, backslash or newline.
        let sample = try Regex(#"^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\.)*",?)*\})? [-+0-9.eE]+(Inf|NaN)?$"#)
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            #expect(line.wholeMatch(of: sample) != nil, "not a sample line: \(line)")
        }
        try await s.stop()
    }

    @Test func healthAndMetrics() async throws {
        let s = try await TestServer.start()
        _ = try await s.request("POST", "/v1/apps/example/devices", key: TestServer.registrationKey, contentType: "application/json", body: #"{"token":"\#(String(repeating: "01", count: 32))"}"#)
        let health = try await s.request("GET", "/healthz/details")
        // "other" has no loaded credentials in this test, so the server reports itself degraded.
        #expect(health.status == 503)
        #expect(health.json?["database"]?["ok"] == .bool(true))
        #expect(health.json?["apps"]?["example"]?["daysToExpiry"] == .int(300))
        let metrics = try await s.request("GET", "/metrics")
        #expect(metrics.status == 200)
        let text = String(decoding: metrics.body, as: UTF8.self)
        #expect(text.contains(#"pushprovider_registrations_total{app="example",outcome="created"} 1"#))
        let unknownRoute = try await s.request("GET", "/v2/nothing")
        #expect(unknownRoute.status == 404)
        #expect(unknownRoute.errorCode == "not_found")
        try await s.stop()
    }
}
