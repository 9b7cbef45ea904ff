import Foundation
import PushCore
@testable import PushServer
import Testing

/// `PushServer.Listener`: the public listener serves the API and a detail-free `/healthz` and answers 404 for
/// what is the operators' (`/metrics`, `/healthz/details`, the console); the admin listener serves all of it.
/// Every request goes over a real socket to a server started with two listeners.
@Suite(.timeLimit(.minutes(2))) struct ListenerTests {
    static let token = String(repeating: "7c", count: 32)

    @Test func thePublicListenerServesTheAPIAndTheVerdictAndHidesTheRest() async throws {
        let s = try await TestServer.start(
            credentials: ["example": .init(loaded: true, kind: "certificate", daysLeft: 300), "other": .init(loaded: true, kind: "token")],
            adminListener: true)
        #expect(s.running.port != s.running.adminPort)
        let registered = try await s.request(
            "POST", "/v1/apps/example/devices", key: TestServer.registrationKey, contentType: "application/json",
            body: #"{"token":"\#(Self.token)"}"#)
        #expect(registered.status == 201, "\(String(decoding: registered.body, as: UTF8.self))")
        let count = try await s.request("GET", "/v1/apps/example/devices/count", key: TestServer.sendKey)
        #expect(count.json == .object([("count", .int(1))]))

        let health = try await s.request("GET", "/healthz")
        #expect(health.status == 200)
        #expect(health.json == .object([("status", .string("ok"))]), "\(String(decoding: health.body, as: UTF8.self))")

        // Not there at all: 404 with the JSON error body (not 405, which would say the path exists), whatever the
        // method, and whatever key is shown.
        for path in ["/metrics", "/healthz/details", "/console", "/console/", "/console/console.js", "/console/console.css"] {
            for method in ["GET", "POST"] {
                let reply = try await s.request(method, path, key: TestServer.sendKey)
                #expect(reply.status == 404, "\(method) \(path) answered \(reply.status)")
                #expect(reply.errorCode == "not_found", "\(method) \(path)")
                #expect(reply.headers["allow"] == nil, "\(method) \(path)")
            }
        }
        try await s.stop()
    }

    @Test func theAdminListenerServesTheMetricsTheDetailsTheConsoleAndTheAPIItCalls() async throws {
        let s = try await TestServer.start(
            credentials: ["example": .init(loaded: true, kind: "certificate", daysLeft: 300), "other": .init(loaded: true, kind: "token")],
            adminListener: true)
        _ = try await s.request(
            "POST", "/v1/apps/example/devices", key: TestServer.registrationKey, contentType: "application/json",
            body: #"{"token":"\#(Self.token)"}"#)

        let metrics = try await s.request("GET", "/metrics", admin: true)
        #expect(metrics.status == 200)
        // Registrations through the public listener are counted where the scraper looks.
        #expect(String(decoding: metrics.body, as: UTF8.self).contains(#"pushprovider_registrations_total{app="example",outcome="created"} 1"#))

        let details = try await s.request("GET", "/healthz/details", admin: true)
        #expect(details.status == 200)
        #expect(details.json?["status"] == .string("ok"))
        #expect(details.json?["apps"]?["example"]?["daysToExpiry"] == .int(300))
        #expect(details.json?["database"]?["ok"] == .bool(true))
        let verdict = try await s.request("GET", "/healthz", admin: true)
        #expect(verdict.json == .object([("status", .string("ok"))]))

        for path in ["/console", "/console/console.js", "/console/console.css"] {
            let file = try await s.request("GET", path, admin: true)
            #expect(file.status == 200, "\(path)")
            #expect(file.headers["content-security-policy"] == PushServer.consoleCSP, "\(path)")
        }
        // What the console calls, on the same origin: the count, a lookup, a preview.
        let count = try await s.request("GET", "/v1/apps/example/devices/count", key: TestServer.sendKey, admin: true)
        #expect(count.json == .object([("count", .int(1))]))
        let device = try await s.request("GET", "/v1/apps/example/devices/\(Self.token)", key: TestServer.sendKey, admin: true)
        #expect(device.status == 200)
        let preview = try await s.request(
            "POST", "/v1/apps/example/payload-preview", key: TestServer.sendKey, contentType: "application/json",
            body: #"{"alert":"hi"}"#, admin: true)
        #expect(preview.status == 200, "\(String(decoding: preview.body, as: UTF8.self))")
        // Keys still apply there: the admin listener is no way around them.
        let anonymous = try await s.request("GET", "/v1/apps/example/devices/count", admin: true)
        #expect(anonymous.status == 401)
        // A method the admin routes do not serve is a 405 there (the path exists).
        let post = try await s.request("POST", "/metrics", contentType: "application/json", body: "{}", admin: true)
        #expect(post.status == 405)
        #expect(post.headers["allow"] == "GET")
        try await s.stop()
    }

    @Test func aDegradedServerSaysSoOnThePublicListenerWithoutSayingWhy() async throws {
        // "other" never loaded its credentials: degraded.
        let s = try await TestServer.start(
            credentials: ["example": .init(loaded: true, kind: "certificate", daysLeft: 300)], adminListener: true)
        let health = try await s.request("GET", "/healthz")
        #expect(health.status == 503)
        #expect(health.json == .object([("status", .string("degraded"))]), "\(String(decoding: health.body, as: UTF8.self))")
        let details = try await s.request("GET", "/healthz/details", admin: true)
        #expect(details.status == 503)
        #expect(details.json?["apps"]?["other"]?["loaded"] == .bool(false))
        try await s.stop()
    }

    @Test func theSameAddressForBothIsOneListenerServingEverything() {
        let address = ListenAddress(host: "127.0.0.1", port: 8080)
        let one = PushServer.plan(public: address, admin: address)
        #expect(one.map(\.listener) == [.admin] && one.map(\.address) == [address])
        let admin = ListenAddress(host: "127.0.0.1", port: 8081)
        let two = PushServer.plan(public: address, admin: admin)
        #expect(two.map(\.listener) == [.publicAPI, .admin] && two.map(\.address) == [address, admin])
        #expect(ServerSettings(port: 8080, admin: address).servesOneListener)
        #expect(!ServerSettings(port: 8080).servesOneListener)
    }
}
