import Foundation
import PostgresTestSupport
import PushCore
import PushStore
import Testing

/// `pushctl serve` is stateless over PostgreSQL: two servers on one database, each with its own pool, take
/// registrations at the same time and agree on every device.
@Suite struct ServersOnPostgresTests {
    static func token(_ i: Int) -> String { String(format: "%064x", 0xabc000 + i) }

    @Test func twoServersOnOneDatabaseRegisterConcurrentlyAndSeeTheSameDevices() async throws {
        let url = try PostgresURL(parsing: try PostgresTestServer.shared().makeDatabase("serve"))
        let a = try await TestServer.start(store: try PostgresRegistry(url: url, password: nil, connections: 4))
        let b = try await TestServer.start(store: try PostgresRegistry(url: url, password: nil, connections: 4))
        defer { Task { try? await a.stop(); try? await b.stop() } }
        // 300 devices; the middle 100 register on both servers at once (a device's launch retried through the
        // other instance), all in parallel.
        try await withThrowingTaskGroup(of: Int.self) { group in
            for i in 0..<300 {
                let servers = (100..<200).contains(i) ? [a, b] : [i % 2 == 0 ? a : b]
                for s in servers {
                    group.addTask {
                        try await s.request(
                            "POST", "/v1/apps/example/devices", key: TestServer.registrationKey,
                            contentType: "application/x-www-form-urlencoded", body: "oldToken=(null)&newToken=\(Self.token(i))"
                        ).status
                    }
                }
            }
            for try await status in group { #expect(status == 200 || status == 201) }
        }
        #expect(try a.store.count(app: "example", channel: nil, environment: nil) == 300)
        #expect(try b.store.count(app: "example", channel: nil, environment: nil) == 300)
        // A replacement posted to one server is seen by the other: the old token is gone everywhere.
        let replaced = try await b.request(
            "POST", "/v1/apps/example/devices", key: TestServer.registrationKey,
            contentType: "application/x-www-form-urlencoded", body: "oldToken=\(Self.token(0))&newToken=\(Self.token(1000))")
        #expect(replaced.status == 200 || replaced.status == 201)
        #expect(try a.store.device(app: "example", token: try DeviceToken(parsing: Self.token(0))) == nil)
        #expect(try a.store.device(app: "example", token: try DeviceToken(parsing: Self.token(1000))) != nil)
        // And a device removed through the first is gone for the second.
        let removed = try await a.request("DELETE", "/v1/apps/example/devices/\(Self.token(1000))", key: TestServer.registrationKey)
        #expect(removed.status == 204)
        #expect(try b.store.count(app: "example", channel: nil, environment: nil) == 299)
    }
}
