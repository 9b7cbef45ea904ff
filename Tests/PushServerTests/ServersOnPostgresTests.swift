import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import TestSupport
import PushCore
import PushDelivery
import PushServer
import PushStore
import Testing

/// `pushctl serve` is stateless over PostgreSQL: two servers on one database, each with its own pool, take
/// registrations at the same time and agree on every device.
@Suite struct ServersOnPostgresTests {
    static func token(_ i: Int) -> String { String(format: "%064x", 0xabc000 + i) }

    @Test func twoServersOnOneDatabaseRegisterConcurrentlyAndSeeTheSameDevices() async throws {
        let url = try PostgresURL(parsing: try await PostgresTestServer.shared().makeDatabase("serve"))
        let a = try await TestServer.start(store: try PostgresRegistry(url: url, password: nil, connections: 4))
        let b = try await TestServer.start(store: try PostgresRegistry(url: url, password: nil, connections: 4))
        defer { Task { try? await a.stop(); try? await b.stop() } }
        // 300 devices; the middle 100 register on both servers at once (a device's launch retried through the
        // other instance), all in parallel — over 16 connections per server rather than URLSession's shared 6, so
        // 200 requests do not queue behind each other inside URLSession, where the timeout already runs. The timeout
        // is a hang guard (120 s): in the full parallel phase on 2 cores one request once took over 30 s.
        let session = URLSession.ephemeral(connectionsPerHost: 16, timeout: 120)
        try await withThrowingTaskGroup(of: Int.self) { group in
            for i in 0..<300 {
                let servers = (100..<200).contains(i) ? [a, b] : [i % 2 == 0 ? a : b]
                for s in servers {
                    group.addTask {
                        try await s.request(
                            "POST", "/v1/apps/example/devices", key: TestServer.registrationKey,
                            contentType: "application/x-www-form-urlencoded", body: "oldToken=(null)&newToken=\(Self.token(i))",
                            session: session
                        ).status
                    }
                }
            }
            for try await status in group { #expect(status == 200 || status == 201) }
        }
        #expect(try blocking { try a.store.count(app: "example", channel: nil, environment: nil) } == 300)
        #expect(try blocking { try b.store.count(app: "example", channel: nil, environment: nil) } == 300)
        // A replacement posted to one server is seen by the other: the old token is gone everywhere.
        let replaced = try await b.request(
            "POST", "/v1/apps/example/devices", key: TestServer.registrationKey,
            contentType: "application/x-www-form-urlencoded", body: "oldToken=\(Self.token(0))&newToken=\(Self.token(1000))")
        #expect(replaced.status == 200 || replaced.status == 201)
        #expect(try blocking { try a.store.device(app: "example", token: try DeviceToken(parsing: Self.token(0))) } == nil)
        #expect(try blocking { try a.store.device(app: "example", token: try DeviceToken(parsing: Self.token(1000))) } != nil)
        // And a device removed through the first is gone for the second.
        let removed = try await a.request("DELETE", "/v1/apps/example/devices/\(Self.token(1000))", key: TestServer.registrationKey)
        #expect(removed.status == 204)
        #expect(try blocking { try b.store.count(app: "example", channel: nil, environment: nil) } == 299)
    }
}

/// A send job survives the server that took it: another server on the same PostgreSQL database adopts it.
@Suite(.timeLimit(.minutes(1))) struct JobAdoptionOnPostgresTests {
    @Test func aJobLeftByAServerThatStoppedIsFinishedByAnotherOnTheSameDatabase() async throws {
        // 200 ms per answer and a window of 500: at most ~2,500 notifications/s, so the job is mid-run when
        // the first server stops.
        let setup = try await NotificationJobTests.Setup.make(responseDelayMs: 200)
        var config = setup.config
        config.database = try await PostgresTestServer.shared().makeDatabase("adopt")
        let url = try PostgresURL(parsing: config.database)
        func server(adoptEvery seconds: Double) async throws -> (TestServer, PostgresRegistry) {
            let registry = try PostgresRegistry(url: url, password: nil, connections: 4)
            var settings = JobRunner.Settings()
            settings.adoptionIntervalSeconds = seconds
            let server = PushServer(
                configuration: config, registry: registry, keys: APIKeys(apps: config.apps),
                credentials: ["example": .init(loaded: true, kind: "certificate", daysLeft: 365)], jobSettings: settings)
            let running = try await server.start(host: "127.0.0.1", port: 0)
            return (TestServer(running: running, store: registry, directory: URL(fileURLWithPath: setup.dir + "/unused")), registry)
        }
        let (a, registry) = try await server(adoptEvery: 3600)
        let tokens = (0..<6000).map { i in try! DeviceToken(parsing: String(format: "ef%062x", i)) }
        for r in try await registry.run({ [registry = registry] _ in registry.registerBatch(tokens.map { RegistrationRequest(app: "example", token: $0, environment: .development) }) }) {
            _ = try r.get()
        }
        let (b, _) = try await server(adoptEvery: 0.5)
        let posted = try await a.request(
            "POST", "/v1/apps/example/notifications", key: "send", contentType: "application/json",
            body: #"{"id":"adopt-1","all":true,"alert":"Hello"}"#)
        #expect(posted.status == 202)
        try await waitUntil(deadline: .seconds(60), "600 notifications received") { setup.simulator.received.count >= 600 }
        // The first server goes away mid-job (a deploy): it stops the job at a checkpoint and releases the lease.
        try await a.stop()
        let atStop = setup.simulator.received.count
        #expect(atStop < tokens.count, "the job finished before the first server stopped")
        // The second one adopts it and finishes it.
        var state = ""
        try await waitUntil(deadline: .seconds(60), every: .milliseconds(100), "adopt-1 completed") {
            state = try await registry.run { [registry = registry] _ in try registry.broadcast(id: "adopt-1") }?.state.rawValue ?? ""
            return state == "completed"
        }
        #expect(state == "completed")
        var copies: [DeviceToken: Int] = [:]
        for r in setup.simulator.received { copies[r.request.token, default: 0] += 1 }
        #expect(copies.count == tokens.count)
        #expect(copies.values.allSatisfy { $0 == 1 })  // a graceful stop drains: nobody gets it twice
        let read1 = try await registry.run { [registry = registry] _ in try registry.broadcastCounts(id: "adopt-1") }
        #expect(read1.accepted == tokens.count)
        try await b.stop()
        try await setup.stop()
    }
}
