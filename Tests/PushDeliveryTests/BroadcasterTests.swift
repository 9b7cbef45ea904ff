import Foundation
import PushCore
import PushDelivery
import PushStore
import Testing
import TestSupport

/// The broadcast engine through its seam alone, on a ``FakeService``: shards, checkpoints, resumes, leases,
/// collapse ids, channels, prunes and deferred rounds, whatever service is behind it. What needs a real sender
/// (stops while requests are on the wire, pruning breakers) is in SendPathTests.
@Suite(.timeLimit(.minutes(2))) struct BroadcasterTests {
    @Test func sendsOnceToEveryDeviceWithTheDefaultCollapseIdAndCompletes() async throws {
        let f = try await EngineFixture.start()
        let tokens = try f.seed(1200)
        try f.create(id: "digest-1")
        let report = try await f.run("digest-1")
        #expect(report.record.state == .completed)
        #expect(report.stop == nil)
        #expect(report.record.total == 1200)
        #expect(report.counts.done == 1200)
        #expect(report.counts.accepted == 1200)
        #expect(try blocking { try f.registry.deliveryStore.shards(id: "digest-1") }.map(\.checkpoint) == [tokens.last?.hex])
        #expect(report.workers.count == 1 && report.workers.values.first == 1200)
        let received = f.received
        #expect(received.count == 1200)
        #expect(Set(received.map(\.token)) == Set(tokens))
        for r in received {
            #expect(r.notificationId == NotificationID.derived(broadcast: "digest-1", token: r.token))
            #expect(r.topic == "", "the engine leaves the topic to the app's APNs sender")
            #expect(r.collapseId == "digest-1")
        }
        // The lean ledger: under the default delivery log, 1,200 accepted devices left no row of their own —
        // no delivery-log row, no per-device outcome — only the counts above.
        let recent: [DeliveryRecord] = try await f.registry.run { [registry = f.registry] _ in
            try registry.recentDeliveries(app: "example", limit: 5000)
        }
        #expect(recent.isEmpty)
        #expect(try blocking { try f.registry.deliveryStore.storedOutcomes(id: "digest-1", after: "", through: BroadcastShard.keySpaceEnd) }.isEmpty)
        try await f.stop()
    }

    @Test func anExplicitCollapseIdWins() async throws {
        let f = try await EngineFixture.start()
        try f.seed(20)
        try f.create(id: "digest-c", collapseId: "morning")
        _ = try await f.run("digest-c")
        #expect(f.received.count == 20)
        #expect(f.received.allSatisfy { $0.collapseId == "morning" })
        try await f.stop()
    }

    @Test func resumesAfterAStopWithoutSendingTwice() async throws {
        let f = try await EngineFixture.start()
        let tokens = try f.seed(3000)
        try f.create(id: "digest-2")
        let stop = StopFlag()
        let first = try await f.run(
            "digest-2", sender: f.makeSender(window: 50, answerDelay: .milliseconds(1)), stop: stop,
            progress: { if $0.done >= 500 { stop.raise(signal: SIGTERM) } })
        #expect(first.record.state == .interrupted)
        #expect(first.signal == SIGTERM)
        #expect(first.counts.done < 3000)
        #expect(first.counts.done == first.sentThisRun)  // in-flight requests were drained and recorded
        let second = try await f.run("digest-2")
        #expect(second.record.state == .completed)
        #expect(second.counts.done == 3000)
        #expect(second.sentThisRun == 3000 - first.counts.done)
        #expect(second.counts.possiblyDuplicated == 0)
        let received = f.received
        #expect(received.count == 3000)
        #expect(Set(received.map(\.token)) == Set(tokens))
        #expect(received.allSatisfy { $0.notificationId == NotificationID.derived(broadcast: "digest-2", token: $0.token) })
        try await f.stop()
    }

    @Test func aRunStoppedBeforeItClaimsAShardLeavesTheBroadcastInterruptedNotRunning() async throws {
        // The signal comes between two claims (here: before the first), so no shard's end records the stop.
        let f = try await EngineFixture.start()
        try f.seed(50)
        try f.create(id: "early")
        let stop = StopFlag()
        stop.raise(signal: SIGTERM)
        let first = try await f.run("early", stop: stop)
        #expect(first.record.state == .interrupted)
        #expect(first.record.error == "interrupted by signal \(SIGTERM)")
        #expect(f.received.isEmpty)
        let second = try await f.run("early")
        #expect(second.record.state == .completed && second.counts.done == 50)
        try await f.stop()
    }

    @Test func targetsAChannel() async throws {
        let f = try await EngineFixture.start()
        let news = try f.seed(300, prefix: "bb", channels: ["news"])
        try f.seed(300, prefix: "cc", channels: ["sports"])
        try f.create(id: "news-1", channel: "news")
        let report = try await f.run("news-1")
        #expect(report.record.total == 300)
        #expect(Set(f.received.map(\.token)) == Set(news))
        try await f.stop()
    }

    @Test func prunedCountsAreWhatTheStoreDeleted() async throws {
        let f = try await EngineFixture.start()
        let tokens = try f.seed(1000)
        let dead = Set(tokens.enumerated().filter { $0.offset % 10 == 0 }.map(\.element))
        let later = Int64(Date().timeIntervalSince1970 * 1000) + 60_000
        // One dead token registered again after the service's evidence of its going: the store keeps it, and it
        // is not counted.
        let reRegistered = try #require(dead.min())
        f.answer { token in
            guard dead.contains(token) else { return .accept }
            return .gone(reason: "Unregistered", timestampMs: token == reRegistered ? 1 : later)
        }
        try f.create(id: "prune-1")
        _ = try await f.registry.run { [registry = f.registry] _ in try registry.register(app: "example", token: reRegistered, environment: .development) }
        let report = try await f.run("prune-1")
        #expect(report.record.state == .completed)
        #expect(report.counts.done == 1000)
        #expect(report.counts.pruned == 99)
        #expect(report.counts.notAcceptedByReason == ["Unregistered": 100])
        let stored1: Int = try await f.registry.run { [registry = f.registry] _ in try registry.count(app: "example") }
        #expect(stored1 == 901)
        let stored2: RegisteredDevice? = try await f.registry.run { [registry = f.registry] _ in try registry.device(app: "example", token: reRegistered) }
        #expect(stored2 != nil)
        let accepted = f.received.map(\.token)
        #expect(Set(accepted) == Set(tokens).subtracting(dead))
        try await f.stop()
    }

    @Test func deferredDevicesAreRetriedByTheNextRunOfTheSameId() async throws {
        let flaky = Set(EngineFixture.tokens(300).suffix(10))
        let f = try await EngineFixture.start()
        f.answer { flaky.contains($0) ? .later("TooManyRequests") : .accept }
        try f.seed(300)
        try f.create(id: "flaky")
        let first = try await f.run("flaky")
        #expect(first.record.state == .completed)
        #expect(first.counts.done == 300 && first.record.total == 300)
        #expect(first.counts.deferred == 10)
        #expect(first.counts.notAcceptedByReason == ["TooManyRequests": 10])
        #expect(f.received.count == 290)
        // The service stops throttling; the same id again sends exactly the deferred ten.
        f.answer { _ in .accept }
        let second = try await f.run("flaky")
        #expect(second.record.state == .completed)
        #expect(second.sentThisRun == 10)
        #expect(second.counts.deferred == 0)
        #expect(second.counts.accepted == 300)
        #expect(f.received.count == 300)
        #expect(Set(f.received.suffix(10).map(\.token)) == flaky)
        // And a third run has nothing left to do.
        let third = try await f.run("flaky")
        #expect(third.sentThisRun == 0)
        #expect(f.received.count == 300)
        try await f.stop()
    }

    @Test func aShardAnotherLiveWorkerHoldsIsWaitedForAndTakenOverWhenItsClaimExpires() async throws {
        let f = try await EngineFixture.start()
        try f.seed(50)
        try f.create(id: "lease-1")
        let store = f.registry.deliveryStore
        _ = try blocking { try store.startBroadcast(id: "lease-1", shardSize: 1000, newRound: true) }
        // A live process (pid 1) claims the only shard, then stops heart-beating.
        let other = "\(ProcessInfo.processInfo.hostName):1:other"
        let held = try #require(try blocking { try store.claimShard(
            broadcastId: "lease-1", apps: nil, owner: other, ttlMs: 1500, ownerIsDead: { _ in false }) })
        let report = try await f.run("lease-1")
        #expect(report.record.state == .completed)
        #expect(f.received.count == 50)
        #expect(report.workers.count == 1 && report.workers[other] == nil)
        // The run took the shard over under a new fence; the stale claim can no longer write.
        #expect(try blocking { try store.shards(id: "lease-1") }.map(\.fence) == [held.fence + 1])
        let stale = OutcomeBatch(app: "example", job: .init(id: "lease-1", shard: 0, fence: held.fence, run: held.run), outcomes: [])
        #expect { _ = try store.commit(stale) } throws: { ($0 as? DeliveryStoreError)?.code == .leaseLost }
        try await f.stop()
    }
}
