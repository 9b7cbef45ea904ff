import Foundation
import PushCore
import PushDelivery
import PushStore
import Synchronization
import Testing

@Suite(.timeLimit(.minutes(2))) struct SendRunTests {
    /// Once every notification has been handed to the sender, waiting for more results to fill a batch only
    /// delays the end: the last outcomes are committed as they arrive. With a commit interval of a minute, a
    /// send to three devices would otherwise take that minute.
    @Test func theLastOutcomesAreCommittedWithoutWaitingForTheBatchInterval() async throws {
        let f = try await EngineFixture.start()
        let tokens = try f.seed(3)
        var configuration = BroadcastConfiguration()
        configuration.commitIntervalMs = 60_000
        configuration.commitBatchSize = 200
        let committed = Mutex<[DeliveryResult]>([])
        let (stop, elapsed) = try await Self.send(tokens, in: f, configuration: configuration, window: 500) { batch in
            committed.withLock { $0 += batch }
        }
        #expect(stop == nil)
        #expect(elapsed < .seconds(30), "the run waited for the commit interval (\(elapsed))")
        #expect(Set(committed.withLock { $0 }.map(\.token)) == Set(tokens))
        #expect(committed.withLock { $0 }.allSatisfy { $0.kind == .accepted })
        let recent: [DeliveryRecord] = try await f.registry.run { [registry = f.registry] _ in
            try registry.recentDeliveries(app: "example", limit: 10)
        }
        #expect(recent.count == 3)
        try await f.stop()
    }

    /// A window smaller than the commit batch: each batch is committed once half the window is waiting for it,
    /// not when the batch fills (it never would: the ahead window's slots — twice the in-flight window — come back
    /// only with the commit) or when the interval ends. With an interval of 90 seconds, 12 devices through a window
    /// of 4 would otherwise wait out that interval for every batch.
    @Test func aWindowSmallerThanTheCommitBatchCommitsAsItFills() async throws {
        let f = try await EngineFixture.start()
        let tokens = try f.seed(12)
        var configuration = BroadcastConfiguration()
        configuration.commitIntervalMs = 90_000
        configuration.commitBatchSize = 200
        let batches = Mutex<[Int]>([])
        let committed = Mutex<[DeliveryResult]>([])
        let (stop, elapsed) = try await Self.send(tokens, in: f, configuration: configuration, window: 4) { batch in
            batches.withLock { $0.append(batch.count) }
            committed.withLock { $0 += batch }
        }
        #expect(stop == nil)
        #expect(elapsed < .seconds(60), "the run waited for the commit interval (\(elapsed))")
        #expect(batches.withLock { $0 }.allSatisfy { $0 <= 8 }, "a batch held more than the ahead window: \(batches.withLock { $0 })")
        #expect(Set(committed.withLock { $0 }.map(\.token)) == Set(tokens))
        let recent: [DeliveryRecord] = try await f.registry.run { [registry = f.registry] _ in
            try registry.recentDeliveries(app: "example", limit: 100)
        }
        #expect(recent.count == 12)
        try await f.stop()
    }

    /// Sends an alert to `tokens` through the fixture's fake service taking `window` in flight; returns how the
    /// run stopped and how long it took.
    private static func send(
        _ tokens: [DeviceToken], in f: EngineFixture, configuration: BroadcastConfiguration, window: Int,
        onCommitted: @escaping @Sendable ([DeliveryResult]) -> Void
    ) async throws -> (StopReason?, Duration) {
        let sender = f.makeSender(window: window)
        let prepared = try Payload(aps: APS(alert: .text("Hello"))).prepare()
        let started = ContinuousClock.now
        let stop = await SendRun(store: f.store, app: "example", configuration: configuration).run(
            .tokens(tokens), sender: sender, stop: StopFlag(),
            makeRequest: { token in
                NotificationRequest(
                    token: token, topic: "com.example.app", pushType: prepared.pushType, priority: prepared.priority,
                    notificationId: UUID().uuidString.lowercased(), payload: prepared.payload)
            },
            onCommitted: onCommitted,
            onUnrecorded: { _ in Issue.record("an outcome was not recorded") })
        let elapsed = ContinuousClock.now - started
        await sender.shutdown()
        return (stop, elapsed)
    }
}
