import PushSimulator
import Foundation
import PushCore
import PushDelivery
import PushSender
import PushServer
import PushStore
import Testing
import TestSupport

/// The feedback webhook end to end over real sockets: the server sends jobs to the real simulator, the
/// simulator answers some devices 410 Unregistered and refuses another app's topic, and a real HTTP receiver
/// gets signed batches of pruned tokens and final failures — after retries when it fails, and without the jobs
/// waiting for it.
@Suite(.timeLimit(.minutes(1))) struct WebhookTests {
    static let secret = "s3cret-webhook-key"

    struct World {
        let setup: NotificationJobTests.Setup
        let server: TestServer
        let registry: SQLiteRegistry
        let receiver: WebhookReceiver
        let simulator: PushSimulator
        let tokens: [DeviceToken]
        let dead: [DeviceToken]

        static func make() async throws -> World {
            let base = try await NotificationJobTests.Setup.make()
            try await base.simulator.stop()
            // The simulator again, with two devices APNs says were unregistered (after they registered: a token
            // registered again after APNs' timestamp is kept).
            let pem = try SimulatorConfiguration.pemFiles(in: base.dir + "/certs")
            let tokens = (0..<8).map { i in try! DeviceToken(parsing: "ef" + String(repeating: "0", count: 61) + String(i)) }
            let dead = Array(tokens.prefix(2))
            let later = Int64(Date().timeIntervalSince1970 * 1000) + 60_000
            var devices: [DeviceToken: DeviceBehaviour] = [:]
            for token in dead { devices[token] = .unregistered(timestampMs: later) }
            let simulator = try PushSimulator(configuration: SimulatorConfiguration(
                host: "127.0.0.1", port: 0, caPEM: pem.ca, serverCertificatePEM: pem.certificate, serverKeyPEM: pem.key,
                receivedLimit: 10_000, devices: devices))
            let port = try await simulator.start()
            let receiver = try await WebhookReceiver.start()
            var config = base.config
            config.simulator.port = port
            let hook = WebhookSettings(url: receiver.url, secret: .environment("PUSHPROVIDER_TEST_WEBHOOK_SECRET"))
            config.apps["example"]?.webhook = hook
            // An app whose topic the client certificate does not cover: APNs refuses every notification (400
            // TopicDisallowed), a final failure.
            var wrong = try #require(config.apps["example"])
            wrong.apns!.topic = "com.example.not-this-app"
            wrong.sendKeys = [APIKeys.hash("send-wrong")]
            config.apps["wrong"] = wrong
            let setup = NotificationJobTests.Setup(dir: base.dir, config: config, simulator: simulator)
            let registry = try SQLiteRegistry(path: config.database)
            var settings = WebhookDispatcher.Settings()
            settings.idlePollMs = 50
            settings.firstRetryMs = 100
            // A request that times out is posted again (at least once, by design): a fresh-clone run on 2 cores saw
            // events 1 and 2 twice after the loaded test process answered them later than the default 10 s. The
            // receiver here always answers, so the tests' "exactly once" needs a timeout beyond any such stall.
            let client = WebhookClient(url: receiver.url, secret: Array(secret.utf8), timeoutMs: 120_000)
            let dispatcher = WebhookDispatcher(
                store: registry.deliveryStore, clients: ["example": client, "wrong": client], settings: settings,
                logger: .init(label: "webhooks"))
            let server = PushServer(
                configuration: config, registry: registry, keys: APIKeys(apps: config.apps),
                credentials: ["example": .init(loaded: true, kind: "certificate", daysLeft: 365)], webhooks: dispatcher)
            let running = try await server.start(host: "127.0.0.1", port: 0)
            for app in ["example", "wrong"] {
                for r in try await registry.run({ [registry = registry] _ in registry.registerBatch(tokens.map { RegistrationRequest(app: app, token: $0, environment: .development) }) }) {
                    _ = try r.get()
                }
            }
            return World(
                setup: setup, server: TestServer(running: running, store: registry, directory: URL(fileURLWithPath: base.dir + "/unused")),
                registry: registry, receiver: receiver, simulator: simulator, tokens: tokens, dead: dead)
        }

        func stop() async throws {
            try await server.stop()
            try await receiver.stop()
            try await setup.stop()
        }

        func send(_ app: String, key: String, id: String) async throws {
            let r = try await server.request("POST", "/v1/apps/\(app)/notifications", key: key, contentType: "application/json",
                                             body: #"{"id":"\#(id)","all":true,"alert":"Hi"}"#)
            #expect(r.status == 202)
            try await waitUntil(deadline: .seconds(30), every: .milliseconds(50), "broadcast \(id) completed") {
                try await registry.run { try $0.broadcast(id: id) }?.state == .completed
            }
        }

        /// Every event the receiver got, by event id (a retried batch may repeat ids).
        func events(app: String) throws -> [Int64: JSONValue] {
            var out: [Int64: JSONValue] = [:]
            for request in receiver.received {
                let body = try JSONValue(parsing: request.body)
                guard body["app"]?.stringValue == app else { continue }
                for event in body["events"]?.arrayValue ?? [] { out[event["id"]?.intValue ?? -1] = event }
            }
            return out
        }

        func waitForEvents(app: String, count: Int) async throws -> [Int64: JSONValue] {
            try? await waitUntil("\(count) webhook events of \(app)") { try events(app: app).count >= count }
            return try events(app: app)
        }
    }

    /// HMAC-SHA256 by OpenSSL's command line, independent of the code under test.
    static func opensslHMAC(key: String, message: [UInt8]) async throws -> String {
        let text = try #require(String(validating: message, as: UTF8.self), "the signed message is not UTF-8")
        let run = try await ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/openssl"), ["dgst", "-sha256", "-hmac", key, "-r"], stdin: text)
        try #require(run.status == 0, "openssl dgst: \(run.stderr)")
        return String(run.stdout.prefix { $0 != " " })
    }

    @Test func prunedTokensAndFinalFailuresArriveSignedAndTheOutboxEmpties() async throws {
        let w = try await World.make()
        try await w.send("example", key: "send", id: "hello")
        let pruned = try await w.waitForEvents(app: "example", count: 2)
        #expect(pruned.count == 2)
        #expect(Set(pruned.values.compactMap { $0["token"]?.stringValue }) == Set(w.dead.map(\.hex)))
        for event in pruned.values {
            #expect(event["type"]?.stringValue == "tokenPruned")
            #expect(event["reason"]?.stringValue == "Unregistered" && event["status"] == .int(410))
            #expect(event["broadcast"]?.stringValue == "hello")
            #expect(event["service"]?.stringValue == "apns")
            #expect(event["apnsTimestamp"]?.stringValue != nil && event["apnsId"]?.stringValue != nil && event["notificationId"] == event["apnsId"])
        }
        let read1 = try await w.registry.run { [registry = w.registry] _ in try registry.count(app: "example") }
        #expect(read1 == 6)
        try await w.send("wrong", key: "send-wrong", id: "refused")
        let failed = try await w.waitForEvents(app: "wrong", count: 8)
        #expect(failed.count == 8)
        #expect(failed.values.allSatisfy {
            $0["type"]?.stringValue == "deliveryFailed" && $0["reason"]?.stringValue == "TopicDisallowed" && $0["status"] == .int(400)
        })
        // Each request is signed over "<timestamp>.<body>" with the app's secret.
        for request in w.receiver.received {
            let timestamp = try #require(request.headers["x-pushprovider-timestamp"])
            let signature = try #require(request.headers["x-pushprovider-signature"])
            let expected = try await Self.opensslHMAC(key: Self.secret, message: Array("\(timestamp).".utf8) + request.body)
            #expect(signature == "sha256=" + expected)
            #expect(abs((Int64(timestamp) ?? 0) - Int64(Date().timeIntervalSince1970)) < 60)
            #expect(request.headers["content-type"] == "application/json")
        }
        // Delivered events leave the outbox; nothing else went out (accepted devices make no event).
        try await waitUntil(deadline: .seconds(10), "the outboxes empty") {
            try blocking({ try w.registry.deliveryStore.webhookBacklog(app: "example") + w.registry.deliveryStore.webhookBacklog(app: "wrong") }) == 0
        }
        #expect(try blocking { try w.registry.deliveryStore.webhookBacklog(app: "example") } == 0)
        #expect(try blocking { try w.registry.deliveryStore.webhookBacklog(app: "wrong") } == 0)
        // Each event went out exactly once (how they were batched depends on how the commits fell): 2 + 8.
        var ids: [Int64] = []
        for request in w.receiver.received {
            let body = try JSONValue(parsing: request.body)
            ids += (body["events"]?.arrayValue ?? []).compactMap { $0["id"]?.intValue }
        }
        #expect(ids.count == 10 && Set(ids).count == 10, "\(ids)")
        try await w.stop()
    }

    @Test func aFailingReceiverNeitherBlocksDeliveryNorLosesEvents() async throws {
        let w = try await World.make()
        w.receiver.answer(503)
        // The job completes while every webhook request fails.
        try await w.send("example", key: "send", id: "during-outage")
        #expect(w.setup.simulator.received.count == 6)  // the simulator records what it accepted: not the two 410s
        try await waitUntil("3 webhook attempts") { w.receiver.received.count >= 3 }
        #expect(w.receiver.received.count >= 3, "the dispatcher retries")
        #expect(try blocking { try w.registry.deliveryStore.webhookBacklog(app: "example") } == 2)
        // The receiver comes back: the same events arrive, once accepted they are gone from the outbox.
        w.receiver.answer(200)
        try await waitUntil("the outbox empty") { try blocking({ try w.registry.deliveryStore.webhookBacklog(app: "example") }) == 0 }
        #expect(try blocking { try w.registry.deliveryStore.webhookBacklog(app: "example") } == 0)
        let events = try w.events(app: "example")
        #expect(Set(events.values.compactMap { $0["token"]?.stringValue }) == Set(w.dead.map(\.hex)))
        // The retries waited longer each time (100, 200, 400 ms …): far fewer requests than idle polls.
        let attempts = w.receiver.received.count
        // A window in which an idle dispatcher would (wrongly) post: that nothing is posted is the test. It stays a
        // fixed wait (an idle poll leaves nothing to observe); 250 ms is five of its 50 ms idle polls.
        try await Task.sleep(for: .milliseconds(250))
        #expect(w.receiver.received.count == attempts, "nothing is posted once the outbox is empty")
        try await w.stop()
    }
}
