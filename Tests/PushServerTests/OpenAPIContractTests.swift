import Foundation
import PushCore
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
            ("DELETE /v1/apps/{app}/devices/{token}", { try await s.request("DELETE", "/v1/apps/example/devices/\(token)", key: TestServer.registrationKey) }),
            ("DELETE /v1/apps/{app}/devices/{token}", { try await s.request("DELETE", "/v1/apps/example/devices/\(token)", key: TestServer.registrationKey) }),
            ("DELETE /v1/apps/{app}/devices/{token}", { try await s.request("DELETE", "/v1/apps/example/devices/zz", key: TestServer.registrationKey) }),
            ("POST /v1/apps/{app}/notifications", { try await s.request("POST", "/v1/apps/example/notifications", key: TestServer.sendKey, contentType: json, body: #"{"id":"c1","tokens":["\#(token)"],"alert":"x"}"#) }),
            ("POST /v1/apps/{app}/notifications", { try await s.request("POST", "/v1/apps/example/notifications", key: TestServer.sendKey, contentType: json, body: #"{"id":"c1","all":true,"alert":"y"}"#) }),
            ("POST /v1/apps/{app}/notifications", { try await s.request("POST", "/v1/apps/example/notifications", key: TestServer.sendKey, contentType: json, body: #"{"all":true}"#) }),
            ("POST /v1/apps/{app}/notifications", { try await s.request("POST", "/v1/apps/example/notifications", key: TestServer.registrationKey, contentType: json, body: "{}") }),
            ("POST /v1/apps/{app}/notifications", { try await s.request("POST", "/v1/apps/example/notifications", key: TestServer.sendKey, contentType: "text/plain", body: "{}") }),
            ("GET /v1/apps/{app}/notifications/{id}", { try await s.request("GET", "/v1/apps/example/notifications/c1", key: TestServer.sendKey) }),
            ("GET /v1/apps/{app}/notifications/{id}", { try await s.request("GET", "/v1/apps/example/notifications/none", key: TestServer.sendKey) }),
            ("GET /v1/apps/{app}/deliveries", { try await s.request("GET", "/v1/apps/example/deliveries?limit=10", key: TestServer.sendKey) }),
            ("GET /v1/apps/{app}/deliveries", { try await s.request("GET", "/v1/apps/example/deliveries?status=lost", key: TestServer.sendKey) }),
            ("GET /v1/apps/{app}/deliveries", { try await s.request("GET", "/v1/apps/example/deliveries", key: TestServer.registrationKey) }),
            ("GET /v1/apps/{app}/deliveries", { try await s.request("GET", "/v1/apps/example/deliveries") }),
            ("GET /v1/apps/{app}/deliveries", { try await s.request("GET", "/v1/apps/missing/deliveries", key: TestServer.sendKey) }),
            ("GET /healthz", { try await s.request("GET", "/healthz") }),
            ("GET /metrics", { try await s.request("GET", "/metrics") }),
        ]
        var exercised = Set<String>()
        for (operation, call) in scenarios {
            let reply = try await call()
            let statuses = try #require(spec[operation], "\(operation) is not in docs/openapi.yaml")
            #expect(statuses.contains(reply.status), "\(operation) answered \(reply.status), not documented")
            if reply.status >= 400 && operation != "GET /healthz" {  // healthz 503 carries the health report
                #expect(reply.errorCode != nil, "\(operation) \(reply.status) must have the JSON error body: \(String(decoding: reply.body, as: UTF8.self))")
            }
            exercised.insert(operation)
        }
        #expect(exercised == Set(spec.keys), "documented but not exercised: \(Set(spec.keys).subtracting(exercised))")
        try await s.stop()
    }
}
