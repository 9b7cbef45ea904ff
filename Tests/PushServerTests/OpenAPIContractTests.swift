import Foundation
import PushCore
import PushStore
@testable import PushServer
import Testing
import Yams

/// The server's routes and status codes must be the ones `docs/openapi.yaml` documents.
@Suite(.timeLimit(.minutes(2))) struct OpenAPIContractTests {
    static let specURL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/openapi.yaml")

    /// (path template, method) → documented status codes.
    static func documented() throws -> [String: Set<Int>] {
        let text = try String(contentsOf: specURL, encoding: .utf8)
        let spec = try #require(try Yams.load(yaml: text) as? [String: Any])
        #expect(spec["openapi"] as? String == "3.1.0")
        let paths = try #require(spec["paths"] as? [String: Any])
        var out: [String: Set<Int>] = [:]
        for (path, value) in paths {
            for (method, operation) in try #require(value as? [String: Any]) {
                let responses = try #require((operation as? [String: Any])?["responses"] as? [String: Any])
                out["\(method.uppercased()) \(path)"] = Set(responses.keys.compactMap { Int($0) })
            }
        }
        return out
    }

    @Test func everyObservedStatusIsDocumentedAndEveryRouteIsServed() async throws {
        let spec = try Self.documented()
        let s = try await TestServer.start(rate: 10_000, burst: 10_000)
        let token = String(repeating: "5a", count: 32)
        let json = "application/json"
        let soon = Timestamp.rfc3339(ms: Int64(Date().timeIntervalSince1970 * 1000) + 86_400_000)
        // (operation, request) pairs covering each route's success and error statuses.
        let scenarios: [(String, () async throws -> TestServer.Reply)] = [
            ("POST /v1/apps/{app}/devices", { try await s.request("POST", "/v1/apps/example/devices", key: TestServer.registrationKey, contentType: json, body: #"{"token":"\#(token)"}"#) }),
            ("POST /v1/apps/{app}/devices", { try await s.request("POST", "/v1/apps/example/devices", key: TestServer.registrationKey, contentType: json, body: #"{"token":"\#(token)"}"#) }),
            ("POST /v1/apps/{app}/devices", { try await s.request("POST", "/v1/apps/example/devices", key: TestServer.registrationKey, contentType: json, body: #"{"token":"x"}"#) }),
            ("POST /v1/apps/{app}/devices", { try await s.request("POST", "/v1/apps/example/devices", contentType: json, body: "{}") }),
            ("POST /v1/apps/{app}/devices", { try await s.request("POST", "/v1/apps/example/devices", key: TestServer.otherSendKey, contentType: json, body: "{}") }),
            ("POST /v1/apps/{app}/devices", { try await s.request("POST", "/v1/apps/missing/devices", key: TestServer.sendKey, contentType: json, body: "{}") }),
            ("POST /v1/apps/{app}/devices", { try await s.request("POST", "/v1/apps/example/devices", key: TestServer.sendKey, contentType: "text/csv", body: "a") }),
            ("POST /v1/apps/{app}/devices", { try await s.request("POST", "/v1/apps/example/devices", key: TestServer.sendKey, contentType: json, body: String(repeating: " ", count: 20_000)) }),
            ("GET /v1/apps/{app}/devices/count", { try await s.request("GET", "/v1/apps/example/devices/count", key: TestServer.sendKey) }),
            ("GET /v1/apps/{app}/devices/count", { try await s.request("GET", "/v1/apps/example/devices/count?environment=moon", key: TestServer.sendKey) }),
            ("GET /v1/apps/{app}/devices/count", { try await s.request("GET", "/v1/apps/example/devices/count", key: TestServer.registrationKey) }),
            ("GET /v1/apps/{app}/devices/count", { try await s.request("GET", "/v1/apps/example/devices/count") }),
            ("GET /v1/apps/{app}/inbox", { try await s.request("GET", "/v1/apps/example/inbox", key: TestServer.sendKey) }),
            ("GET /v1/apps/{app}/inbox", { try await s.request("GET", "/v1/apps/example/inbox?limit=0", key: TestServer.sendKey) }),
            ("GET /v1/apps/{app}/inbox", { try await s.request("GET", "/v1/apps/example/inbox") }),
            ("GET /v1/apps/{app}/inbox", { try await s.request("GET", "/v1/apps/example/inbox", key: TestServer.otherSendKey) }),
            ("DELETE /v1/apps/{app}/inbox", { try await s.request("DELETE", "/v1/apps/example/inbox", key: TestServer.sendKey) }),
            ("DELETE /v1/apps/{app}/inbox", { try await s.request("DELETE", "/v1/apps/example/inbox") }),
            ("DELETE /v1/apps/{app}/inbox", { try await s.request("DELETE", "/v1/apps/example/inbox", key: TestServer.otherSendKey) }),
            ("GET /v1/apps/{app}/webpush/key", { try await s.request("GET", "/v1/apps/example/webpush/key", key: TestServer.registrationKey) }),
            ("GET /v1/apps/{app}/webpush/key", { try await s.request("GET", "/v1/apps/example/webpush/key") }),
            ("GET /v1/apps/{app}/webpush/key", { try await s.request("GET", "/v1/apps/example/webpush/key", key: TestServer.otherSendKey) }),
            ("GET /v1/apps/{app}/unifiedpush/key", { try await s.request("GET", "/v1/apps/example/unifiedpush/key", key: TestServer.registrationKey) }),
            ("GET /v1/apps/{app}/unifiedpush/key", { try await s.request("GET", "/v1/apps/example/unifiedpush/key") }),
            ("POST /v1/apps/{app}/devices", { try await s.request("POST", "/v1/apps/example/devices", key: TestServer.registrationKey, contentType: json, body: #"{"service":"webpush","subscription":{}}"#) }),
            ("GET /v1/apps/{app}/devices/{token}", { try await s.request("GET", "/v1/apps/example/devices/\(token)", key: TestServer.sendKey) }),
            ("GET /v1/apps/{app}/devices/{token}", { try await s.request("GET", "/v1/apps/example/devices/zz", key: TestServer.sendKey) }),
            ("GET /v1/apps/{app}/devices/{token}", { try await s.request("GET", "/v1/apps/example/devices/\(token)", key: TestServer.registrationKey) }),
            ("GET /v1/apps/{app}/devices/{token}", { try await s.request("GET", "/v1/apps/example/devices/\(token)") }),
            ("GET /v1/apps/{app}/devices/lookup", { try await s.request("GET", "/v1/apps/example/devices/lookup?fcmToken=nosuch:APA91b\(String(repeating: "x", count: 140))", key: TestServer.sendKey) }),
            ("GET /v1/apps/{app}/devices/lookup", { try await s.request("GET", "/v1/apps/example/devices/lookup?endpoint=http%3A%2F%2Fx", key: TestServer.sendKey) }),
            ("GET /v1/apps/{app}/devices/lookup", { try await s.request("GET", "/v1/apps/example/devices/lookup?fcmToken=x") }),
            ("DELETE /v1/apps/{app}/devices/{token}", { try await s.request("DELETE", "/v1/apps/example/devices/\(token)", key: TestServer.registrationKey) }),
            ("DELETE /v1/apps/{app}/devices/{token}", { try await s.request("DELETE", "/v1/apps/example/devices/\(token)", key: TestServer.registrationKey) }),
            ("GET /v1/apps/{app}/devices/{token}", { try await s.request("GET", "/v1/apps/example/devices/\(token)", key: TestServer.sendKey) }),
            ("POST /v1/apps/{app}/payload-preview", { try await s.request("POST", "/v1/apps/example/payload-preview", key: TestServer.sendKey, contentType: json, body: #"{"alert":"x","sound":"default"}"#) }),
            ("POST /v1/apps/{app}/payload-preview", { try await s.request("POST", "/v1/apps/example/payload-preview", key: TestServer.sendKey, contentType: json, body: #"{"silent":true,"alert":"x"}"#) }),
            ("POST /v1/apps/{app}/payload-preview", { try await s.request("POST", "/v1/apps/example/payload-preview", key: TestServer.registrationKey, contentType: json, body: "{}") }),
            ("POST /v1/apps/{app}/payload-preview", { try await s.request("POST", "/v1/apps/example/payload-preview", contentType: json, body: "{}") }),
            ("POST /v1/apps/{app}/payload-preview", { try await s.request("POST", "/v1/apps/missing/payload-preview", key: TestServer.sendKey, contentType: json, body: "{}") }),
            ("POST /v1/apps/{app}/payload-preview", { try await s.request("POST", "/v1/apps/example/payload-preview", key: TestServer.sendKey, contentType: "text/plain", body: "{}") }),
            ("POST /v1/apps/{app}/payload-preview", { try await s.request("POST", "/v1/apps/example/payload-preview", key: TestServer.sendKey, contentType: json, body: String(repeating: " ", count: 70_000)) }),
            ("DELETE /v1/apps/{app}/devices/{token}", { try await s.request("DELETE", "/v1/apps/example/devices/zz", key: TestServer.registrationKey) }),
            ("POST /v1/apps/{app}/notifications", { try await s.request("POST", "/v1/apps/example/notifications", key: TestServer.sendKey, contentType: json, body: #"{"id":"c1","tokens":["\#(token)"],"alert":"x"}"#) }),
            ("POST /v1/apps/{app}/notifications", { try await s.request("POST", "/v1/apps/example/notifications", key: TestServer.sendKey, contentType: json, body: #"{"id":"c1","all":true,"alert":"y"}"#) }),
            ("POST /v1/apps/{app}/notifications", { try await s.request("POST", "/v1/apps/example/notifications", key: TestServer.sendKey, contentType: json, body: #"{"all":true}"#) }),
            ("POST /v1/apps/{app}/notifications", { try await s.request("POST", "/v1/apps/example/notifications", key: TestServer.registrationKey, contentType: json, body: "{}") }),
            ("POST /v1/apps/{app}/notifications", { try await s.request("POST", "/v1/apps/example/notifications", key: TestServer.sendKey, contentType: "text/plain", body: "{}") }),
            ("GET /v1/apps/{app}/notifications/{id}", { try await s.request("GET", "/v1/apps/example/notifications/c1", key: TestServer.sendKey) }),
            ("POST /v1/apps/{app}/notifications", { try await s.request("POST", "/v1/apps/example/notifications", key: TestServer.sendKey, contentType: json, body: #"{"id":"c2","all":true,"alert":"z","at":"\#(soon)"}"#) }),
            ("POST /v1/apps/{app}/notifications", { try await s.request("POST", "/v1/apps/example/notifications", key: TestServer.sendKey, contentType: json, body: #"{"id":"c3","all":true,"alert":"z","at":4102444800}"#) }),
            ("GET /v1/apps/{app}/notifications", { try await s.request("GET", "/v1/apps/example/notifications", key: TestServer.sendKey) }),
            ("GET /v1/apps/{app}/notifications", { try await s.request("GET", "/v1/apps/example/notifications?state=cancelled&limit=5", key: TestServer.sendKey) }),
            ("GET /v1/apps/{app}/notifications", { try await s.request("GET", "/v1/apps/example/notifications?state=done", key: TestServer.sendKey) }),
            ("GET /v1/apps/{app}/notifications", { try await s.request("GET", "/v1/apps/example/notifications", key: TestServer.registrationKey) }),
            ("DELETE /v1/apps/{app}/notifications/{id}", { try await s.request("DELETE", "/v1/apps/example/notifications/c2", key: TestServer.sendKey) }),
            ("DELETE /v1/apps/{app}/notifications/{id}", { try await s.request("DELETE", "/v1/apps/example/notifications/none", key: TestServer.sendKey) }),
            ("DELETE /v1/apps/{app}/notifications/{id}", { try await s.request("DELETE", "/v1/apps/example/notifications/c2", key: TestServer.otherSendKey) }),
            ("DELETE /v1/apps/{app}/notifications/{id}", { try await s.request("DELETE", "/v1/apps/example/notifications/c2") }),
            ("GET /v1/apps/{app}/notifications/{id}", { try await s.request("GET", "/v1/apps/example/notifications/none", key: TestServer.sendKey) }),
            ("GET /v1/apps/{app}/deliveries", { try await s.request("GET", "/v1/apps/example/deliveries?limit=10", key: TestServer.sendKey) }),
            ("GET /v1/apps/{app}/deliveries", { try await s.request("GET", "/v1/apps/example/deliveries?status=lost", key: TestServer.sendKey) }),
            ("GET /v1/apps/{app}/deliveries", { try await s.request("GET", "/v1/apps/example/deliveries", key: TestServer.registrationKey) }),
            ("GET /v1/apps/{app}/deliveries", { try await s.request("GET", "/v1/apps/example/deliveries") }),
            ("GET /v1/apps/{app}/deliveries", { try await s.request("GET", "/v1/apps/missing/deliveries", key: TestServer.sendKey) }),
            ("POST /v1/apps/{app}/live-activities/push-to-start-tokens", { try await s.request("POST", "/v1/apps/example/live-activities/push-to-start-tokens", key: TestServer.registrationKey, contentType: json, body: #"{"token":"\#(token)","installation":"i1","attributesType":"Score"}"#) }),
            ("POST /v1/apps/{app}/live-activities/push-to-start-tokens", { try await s.request("POST", "/v1/apps/example/live-activities/push-to-start-tokens", key: TestServer.registrationKey, contentType: json, body: #"{"token":"\#(token)","installation":"i1","attributesType":"Score"}"#) }),
            ("POST /v1/apps/{app}/live-activities/push-to-start-tokens", { try await s.request("POST", "/v1/apps/example/live-activities/push-to-start-tokens", key: TestServer.registrationKey, contentType: json, body: #"{"token":"\#(token)"}"#) }),
            ("POST /v1/apps/{app}/live-activities/push-to-start-tokens", { try await s.request("POST", "/v1/apps/example/live-activities/push-to-start-tokens", contentType: json, body: "{}") }),
            ("POST /v1/apps/{app}/live-activities/push-to-start-tokens", { try await s.request("POST", "/v1/apps/example/live-activities/push-to-start-tokens", key: TestServer.otherSendKey, contentType: json, body: "{}") }),
            ("POST /v1/apps/{app}/live-activities/push-to-start-tokens", { try await s.request("POST", "/v1/apps/missing/live-activities/push-to-start-tokens", key: TestServer.sendKey, contentType: json, body: "{}") }),
            ("POST /v1/apps/{app}/live-activities/push-to-start-tokens", { try await s.request("POST", "/v1/apps/example/live-activities/push-to-start-tokens", key: TestServer.sendKey, contentType: "text/plain", body: "{}") }),
            ("POST /v1/apps/{app}/live-activities/push-to-start-tokens", { try await s.request("POST", "/v1/apps/example/live-activities/push-to-start-tokens", key: TestServer.sendKey, contentType: json, body: String(repeating: " ", count: 20_000)) }),
            ("DELETE /v1/apps/{app}/live-activities/push-to-start-tokens/{token}", { try await s.request("DELETE", "/v1/apps/example/live-activities/push-to-start-tokens/\(token)", key: TestServer.registrationKey) }),
            ("DELETE /v1/apps/{app}/live-activities/push-to-start-tokens/{token}", { try await s.request("DELETE", "/v1/apps/example/live-activities/push-to-start-tokens/\(token)", key: TestServer.registrationKey) }),
            ("DELETE /v1/apps/{app}/live-activities/push-to-start-tokens/{token}", { try await s.request("DELETE", "/v1/apps/example/live-activities/push-to-start-tokens/zz", key: TestServer.registrationKey) }),
            ("POST /v1/apps/{app}/live-activities/update-tokens", { try await s.request("POST", "/v1/apps/example/live-activities/update-tokens", key: TestServer.registrationKey, contentType: json, body: #"{"token":"\#(token)","activityId":"a1"}"#) }),
            ("POST /v1/apps/{app}/live-activities/update-tokens", { try await s.request("POST", "/v1/apps/example/live-activities/update-tokens", key: TestServer.registrationKey, contentType: json, body: #"{"token":"\#(token)"}"#) }),
            ("POST /v1/apps/{app}/live-activities/update-tokens", { try await s.request("POST", "/v1/apps/example/live-activities/update-tokens", key: TestServer.otherSendKey, contentType: json, body: "{}") }),
            ("DELETE /v1/apps/{app}/live-activities/activities/{activity}", { try await s.request("DELETE", "/v1/apps/example/live-activities/activities/a1", key: TestServer.registrationKey) }),
            ("DELETE /v1/apps/{app}/live-activities/activities/{activity}", { try await s.request("DELETE", "/v1/apps/example/live-activities/activities/a1", key: TestServer.registrationKey) }),
            ("DELETE /v1/apps/{app}/live-activities/update-tokens/{token}", { try await s.request("DELETE", "/v1/apps/example/live-activities/update-tokens/\(token)", key: TestServer.registrationKey) }),
            ("DELETE /v1/apps/{app}/live-activities/update-tokens/{token}", { try await s.request("DELETE", "/v1/apps/example/live-activities/update-tokens/zz", key: TestServer.registrationKey) }),
            // The example app has certificate credentials: Live Activity sends are a 409 (APNs wants token auth), and
            // the channel API a 503 (its .p12 does not exist here).
            ("POST /v1/apps/{app}/live-activities/start", { try await s.request("POST", "/v1/apps/example/live-activities/start", key: TestServer.sendKey, contentType: json, body: #"{"all":true,"content":{}}"#) }),
            ("POST /v1/apps/{app}/live-activities/start", { try await s.request("POST", "/v1/apps/example/live-activities/start", key: TestServer.registrationKey, contentType: json, body: "{}") }),
            ("POST /v1/apps/{app}/live-activities/activities/{activity}/update", { try await s.request("POST", "/v1/apps/example/live-activities/activities/a1/update", key: TestServer.sendKey, contentType: json, body: "{}") }),
            ("POST /v1/apps/{app}/live-activities/activities/{activity}/end", { try await s.request("POST", "/v1/apps/example/live-activities/activities/a1/end", key: TestServer.sendKey, contentType: json, body: "{}") }),
            ("POST /v1/apps/{app}/live-activities/activities/{activity}/end", { try await s.request("POST", "/v1/apps/example/live-activities/activities/a1/end") }),
            ("POST /v1/apps/{app}/broadcast-channels", { try await s.request("POST", "/v1/apps/example/broadcast-channels", key: TestServer.sendKey, contentType: json, body: "{}") }),
            ("POST /v1/apps/{app}/broadcast-channels", { try await s.request("POST", "/v1/apps/example/broadcast-channels", key: TestServer.sendKey, contentType: json, body: #"{"storagePolicy":"always"}"#) }),
            ("POST /v1/apps/{app}/broadcast-channels", { try await s.request("POST", "/v1/apps/example/broadcast-channels", key: TestServer.registrationKey, contentType: json, body: "{}") }),
            ("GET /v1/apps/{app}/broadcast-channels", { try await s.request("GET", "/v1/apps/example/broadcast-channels", key: TestServer.sendKey) }),
            ("GET /v1/apps/{app}/broadcast-channels", { try await s.request("GET", "/v1/apps/example/broadcast-channels") }),
            ("GET /v1/apps/{app}/broadcast-channels/{channel}", { try await s.request("GET", "/v1/apps/example/broadcast-channels/abcd", key: TestServer.sendKey) }),
            ("GET /v1/apps/{app}/broadcast-channels/{channel}", { try await s.request("GET", "/v1/apps/example/broadcast-channels/ab%2Ccd", key: TestServer.sendKey) }),
            ("DELETE /v1/apps/{app}/broadcast-channels/{channel}", { try await s.request("DELETE", "/v1/apps/example/broadcast-channels/abcd", key: TestServer.sendKey) }),
            ("DELETE /v1/apps/{app}/broadcast-channels/{channel}", { try await s.request("DELETE", "/v1/apps/example/broadcast-channels/abcd?environment=moon", key: TestServer.sendKey) }),
            ("POST /v1/apps/{app}/broadcast-channels/{channel}/notifications", { try await s.request("POST", "/v1/apps/example/broadcast-channels/abcd/notifications", key: TestServer.sendKey, contentType: json, body: #"{"content":{"event":"update","content-state":{}}}"#) }),
            ("POST /v1/apps/{app}/broadcast-channels/{channel}/notifications", { try await s.request("POST", "/v1/apps/example/broadcast-channels/abcd/notifications", key: TestServer.sendKey, contentType: json, body: #"{"content":{"event":"start"}}"#) }),
            ("POST /v1/apps/{app}/devices", { try await s.request("POST", "/v1/apps/example/devices", key: TestServer.registrationKey, contentType: json, body: #"{"token":"\#(token)","user":"u1"}"#) }),
            ("POST /v1/apps/{app}/devices", { try await s.request("POST", "/v1/apps/example/devices", key: TestServer.sendKey, contentType: json, body: #"{"token":"\#(token)","user":"u1","timeZone":"Europe/Berlin"}"#) }),
            ("GET /v1/apps/{app}/users/{user}/devices", { try await s.request("GET", "/v1/apps/example/users/u1/devices", key: TestServer.sendKey) }),
            ("GET /v1/apps/{app}/users/{user}/devices", { try await s.request("GET", "/v1/apps/example/users/a%20b/devices", key: TestServer.sendKey) }),
            ("GET /v1/apps/{app}/users/{user}/devices", { try await s.request("GET", "/v1/apps/example/users/u1/devices", key: TestServer.registrationKey) }),
            ("GET /v1/apps/{app}/users/{user}/devices", { try await s.request("GET", "/v1/apps/example/users/u1/devices") }),
            ("GET /v1/apps/{app}/users/{user}/devices", { try await s.request("GET", "/v1/apps/missing/users/u1/devices", key: TestServer.sendKey) }),
            ("POST /v1/apps/{app}/audience-count", { try await s.request("POST", "/v1/apps/example/audience-count", key: TestServer.sendKey, contentType: json, body: #"{"audience":{"user":"u1","where":["timeZone = Europe/*"]}}"#) }),
            ("POST /v1/apps/{app}/audience-count", { try await s.request("POST", "/v1/apps/example/audience-count", key: TestServer.sendKey, contentType: json, body: #"{"audience":{"where":["color = red"]}}"#) }),
            ("POST /v1/apps/{app}/audience-count", { try await s.request("POST", "/v1/apps/example/audience-count", key: TestServer.registrationKey, contentType: json, body: "{}") }),
            ("POST /v1/apps/{app}/audience-count", { try await s.request("POST", "/v1/apps/example/audience-count") }),
            ("POST /v1/apps/{app}/audience-count", { try await s.request("POST", "/v1/apps/missing/audience-count", key: TestServer.sendKey, contentType: json, body: "{}") }),
            ("POST /v1/apps/{app}/audience-count", { try await s.request("POST", "/v1/apps/example/audience-count", key: TestServer.sendKey, contentType: "text/plain", body: "{}") }),
            ("POST /v1/apps/{app}/audience-count", { try await s.request("POST", "/v1/apps/example/audience-count", key: TestServer.sendKey, contentType: json, body: String(repeating: " ", count: 20_000)) }),
            ("POST /v1/apps/{app}/notifications", { try await s.request("POST", "/v1/apps/example/notifications", key: TestServer.sendKey, contentType: json, body: #"{"id":"c4","audience":{"user":"u1"},"alert":{"default":"x","de":"y"},"localTime":{"time":"09:00","date":"2099-12-24"}}"#) }),
            ("GET /v1/apps/{app}/notifications/{id}", { try await s.request("GET", "/v1/apps/example/notifications/c4", key: TestServer.sendKey) }),
            ("DELETE /v1/apps/{app}/notifications/{id}", { try await s.request("DELETE", "/v1/apps/example/notifications/c4", key: TestServer.sendKey) }),
            ("DELETE /v1/apps/{app}/users/{user}", { try await s.request("DELETE", "/v1/apps/example/users/u1", key: TestServer.sendKey) }),
            ("DELETE /v1/apps/{app}/users/{user}", { try await s.request("DELETE", "/v1/apps/example/users/u1", key: TestServer.sendKey) }),
            ("DELETE /v1/apps/{app}/users/{user}", { try await s.request("DELETE", "/v1/apps/example/users/a%20b", key: TestServer.sendKey) }),
            ("DELETE /v1/apps/{app}/users/{user}", { try await s.request("DELETE", "/v1/apps/example/users/u1", key: TestServer.registrationKey) }),
            ("DELETE /v1/apps/{app}/users/{user}", { try await s.request("DELETE", "/v1/apps/example/users/u1") }),
            ("DELETE /v1/apps/{app}/users/{user}", { try await s.request("DELETE", "/v1/apps/missing/users/u1", key: TestServer.sendKey) }),
            ("GET /healthz", { try await s.request("GET", "/healthz") }),
            ("GET /healthz/details", { try await s.request("GET", "/healthz/details") }),
            ("GET /livez", { try await s.request("GET", "/livez") }),
            ("GET /readyz", { try await s.request("GET", "/readyz") }),
            ("GET /metrics", { try await s.request("GET", "/metrics") }),
        ]
        var exercised = Set<String>()
        for (operation, call) in scenarios {
            let reply = try await call()
            let statuses = try #require(spec[operation], "\(operation) is not in docs/openapi.yaml")
            #expect(statuses.contains(reply.status), "\(operation) answered \(reply.status), not documented")
            if reply.status >= 400 && !["GET /healthz", "GET /healthz/details", "GET /readyz"].contains(operation) {  // their 503 carries the verdict or the report
                #expect(reply.errorCode != nil, "\(operation) \(reply.status) must have the JSON error body: \(String(decoding: reply.body, as: UTF8.self))")
            }
            exercised.insert(operation)
        }
        #expect(exercised == Set(spec.keys), "documented but not exercised: \(Set(spec.keys).subtracting(exercised))")
        try await s.stop()
    }

    /// `timeZone` is checked against the tz database; the description lists the same zones, so what schemathesis
    /// generates from it is what the server accepts.
    @Test func theDocumentedTimeZonesAreTheServersTzDatabase() throws {
        let text = try String(contentsOf: Self.specURL, encoding: .utf8)
        let spec = try #require(try Yams.load(yaml: text) as? [String: Any])
        let schemas = try #require((spec["components"] as? [String: Any])?["schemas"] as? [String: Any])
        let zones = try #require((schemas["TimeZone"] as? [String: Any])?["enum"] as? [String])
        #expect(Set(zones) == SystemTimeZones.names.allNames)
        #expect(zones == zones.sorted())
    }

    /// A clause of the filter language is described with the grammar's own pattern, which the server also checks:
    /// a client validating against the description accepts exactly what the server does.
    @Test func theDocumentedClausePatternIsTheServersGrammar() throws {
        let text = try String(contentsOf: Self.specURL, encoding: .utf8)
        let spec = try #require(try Yams.load(yaml: text) as? [String: Any])
        let schemas = try #require((spec["components"] as? [String: Any])?["schemas"] as? [String: Any])
        let pattern = try #require((schemas["Clause"] as? [String: Any])?["pattern"] as? String)
        #expect(pattern == AudienceGrammar.clausePattern, "docs/openapi.yaml Clause.pattern should be: \(AudienceGrammar.clausePattern)")
    }

    @Test func theDescriptionsVersionIsTheProductVersion() throws {
        let text = try String(contentsOf: Self.specURL, encoding: .utf8)
        let spec = try #require(try Yams.load(yaml: text) as? [String: Any])
        let info = try #require(spec["info"] as? [String: Any])
        #expect(info["version"] as? String == ProductVersion.semantic)
    }

    @Test func theServersRouteTableIsTheDocumentedOneAndTheConsole() throws {
        var documented: [String: Set<String>] = [:]
        for key in try Self.documented().keys {
            let parts = key.split(separator: " ", maxSplits: 1).map(String.init)
            documented[parts[1], default: []].insert(parts[0])
        }
        var served: [String: Set<String>] = [:]
        for route in RouteTable.routes + RouteTable.adminRoutes {
            let path = route.template.split(separator: "/", omittingEmptySubsequences: false)
                .map { $0.hasPrefix(":") ? "{\($0.dropFirst())}" : String($0) }.joined(separator: "/")
            served[path] = Set(route.methods.map(\.rawValue))
        }
        #expect(served == documented)
        // The console's static files (README "Console") are the only undocumented paths, GET only.
        #expect(RouteTable.consoleRoutes.allSatisfy { $0.template.hasPrefix("/console") && $0.methods == [.get] })
    }

    @Test func undeclaredMethodsOnDocumentedPathsAre405WithTheDocumentedAllow() async throws {
        let spec = try Self.documented()
        var methods: [String: Set<String>] = [:]
        for key in spec.keys {
            let parts = key.split(separator: " ", maxSplits: 1).map(String.init)
            methods[parts[1], default: []].insert(parts[0])
        }
        let s = try await TestServer.start()
        for (path, allowed) in methods.sorted(by: { $0.key < $1.key }) {
            let concrete = path.replacingOccurrences(of: "{app}", with: "example")
                .replacingOccurrences(of: "{token}", with: String(repeating: "ab", count: 32))
                .replacingOccurrences(of: "{id}", with: "some-job")
            for method in ["GET", "POST", "PUT", "PATCH", "DELETE"] where !allowed.contains(method) {
                let r = try await s.request(method, concrete, key: TestServer.sendKey, contentType: "application/json", body: method == "GET" ? nil : "{}")
                #expect(r.status == 405, "\(method) \(path)")
                let allow = Set((r.headers["allow"] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
                #expect(allow == allowed, "\(method) \(path): Allow \(allow)")
                #expect(r.errorCode == "method_not_allowed")
            }
        }
        // An unknown path stays 404.
        #expect(try await s.request("GET", "/v1/nothing", key: TestServer.sendKey).status == 404)
        try await s.stop()
    }
}
