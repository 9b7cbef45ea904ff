import Foundation
import PushCore
import PushDelivery
import PushStore
import TestSupport

/// The engine's world in its tests: a real registry file and a ``FakeService`` behind the seam — no TLS, no
/// simulator, no sender. The services a test makes share one record of what was accepted and one set of answer
/// rules, as runs one after another share one server.
struct EngineFixture {
    let dir: String
    let registry: SQLiteRegistry
    let store: any DeliveryStore
    let database: String
    let log = FakeService.ReceivedLog()
    let rules = FakeService.Rules()

    static func start() async throws -> EngineFixture {
        let dir = try TemporaryDirectories.make("engine")
        let database = dir + "/registry.sqlite"
        let registry = try SQLiteRegistry(path: database)
        return EngineFixture(dir: dir, registry: registry, store: registry.deliveryStore, database: database)
    }

    func stop() async throws { try? FileManager.default.removeItem(atPath: dir) }

    /// A service taking `window` in flight; `answerDelay` paces its answers one by one (a run a test stops midway
    /// needs a pace, or it ends before the stop).
    func makeSender(window: Int = 500, answerDelay: Duration = .zero) -> FakeService {
        FakeService(inFlightLimit: window, answerDelay: answerDelay, log: log, rules: rules)
    }

    /// How later sends are answered.
    func answer(_ rule: @escaping @Sendable (DeviceToken) -> FakeService.Answer) { rules.set(rule) }

    /// Every request the services accepted, in order.
    var received: [NotificationRequest] { log.all }

    /// How many times the services accepted each token.
    func acceptedCopies() -> [DeviceToken: Int] {
        var copies: [DeviceToken: Int] = [:]
        for r in received { copies[r.token, default: 0] += 1 }
        return copies
    }

    func broadcaster(batchSize: Int = 250) -> Broadcaster {
        var c = BroadcastConfiguration()
        c.batchSize = batchSize
        c.storeOutageLimitMs = 30_000
        return Broadcaster(store: store, configuration: c)
    }

    /// Runs (or resumes) `id` with a fresh service (sharing the record) and shuts it down.
    func run(
        _ id: String, sender: FakeService? = nil, stop: StopFlag = StopFlag(), batchSize: Int = 250,
        progress: @escaping @Sendable (BroadcastProgress) -> Void = { _ in }
    ) async throws -> BroadcastReport {
        let sender = sender ?? makeSender()
        let report = try await broadcaster(batchSize: batchSize).run(
            id: id, sender: sender, stop: stop, progressInterval: 0.02, progress: progress)
        await sender.shutdown()
        return report
    }

    /// Registers `count` distinct tokens (optionally in a channel) and returns them in key order.
    @discardableResult
    func seed(_ count: Int, prefix: String = "aa", channels: [String]? = nil) throws -> [DeviceToken] {
        let tokens = Self.tokens(count, prefix: prefix)
        let results = registry.registerBatch(tokens.map {
            RegistrationRequest(app: "example", token: $0, channels: channels, environment: .development)
        })
        for r in results { _ = try r.get() }
        return tokens.sorted()
    }

    static func tokens(_ count: Int, prefix: String = "aa") -> [DeviceToken] { prefixedTestTokens(count, prefix: prefix) }

    /// Creates a broadcast record for an alert.
    @discardableResult
    func create(id: String, channel: String? = nil, collapseId: String? = nil) throws -> BroadcastRecord {
        let record = try digestBroadcast(id: id, channel: channel, collapseId: collapseId)
        try registry.createBroadcast(record)
        return record
    }
}
