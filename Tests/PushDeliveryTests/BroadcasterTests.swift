import PushSimulator
import Foundation
import PushCore
import PushDelivery
import PushSender
import PushStore
import Testing
import TestSupport

@Suite(.timeLimit(.minutes(2))) struct BroadcasterTests {
    @Test func sendsOnceToEveryDeviceWithTheDefaultCollapseIdAndCompletes() async throws {
        let f = try await BroadcastFixture.start()
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
        let received = f.simulator.received
        #expect(received.count == 1200)
        #expect(Set(received.map(\.request.token)) == Set(tokens))
        for r in received {
            #expect(r.request.apnsId == APNsID.derived(broadcast: "digest-1", token: r.request.token))
            #expect(r.request.topic == "com.example.app")
            #expect(r.request.collapseId == "digest-1")
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
        let f = try await BroadcastFixture.start()
        try f.seed(20)
        try f.create(id: "digest-c", collapseId: "morning")
        _ = try await f.run("digest-c")
        #expect(f.simulator.received.count == 20)
        #expect(f.simulator.received.allSatisfy { $0.request.collapseId == "morning" })
        try await f.stop()
    }

    @Test func resumesAfterAStopWithoutSendingTwice() async throws {
        let f = try await BroadcastFixture.start()
        let tokens = try f.seed(3000)
        try f.create(id: "digest-2")
        let stop = StopFlag()
        let first = try await f.run(
            "digest-2", sender: try f.makeSender(window: 50), stop: stop,
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
        let received = f.simulator.received.map(\.request)
        #expect(received.count == 3000)
        #expect(Set(received.map(\.token)) == Set(tokens))
        #expect(received.allSatisfy { $0.apnsId == APNsID.derived(broadcast: "digest-2", token: $0.token) })
        try await f.stop()
    }

    @Test func aRunStoppedBeforeItClaimsAShardLeavesTheBroadcastInterruptedNotRunning() async throws {
        // The signal comes between two claims (here: before the first), so no shard's end records the stop.
        let f = try await BroadcastFixture.start()
        try f.seed(50)
        try f.create(id: "early")
        let stop = StopFlag()
        stop.raise(signal: SIGTERM)
        let first = try await f.run("early", stop: stop)
        #expect(first.record.state == .interrupted)
        #expect(first.record.error == "interrupted by signal \(SIGTERM)")
        #expect(f.simulator.received.isEmpty)
        let second = try await f.run("early")
        #expect(second.record.state == .completed && second.counts.done == 50)
        try await f.stop()
    }

    @Test func aStopWhileTheWindowWaitsForAnswersDrainsWithoutWritingAnythingAgain() async throws {
        // No answer comes (as for a host that lost its link): the window fills and the loop waits for a slot.
        // SIGTERM then must still reach the sender at once, so the requests that time out come back unsent
        // (pending, possibly sent) instead of being written again after another worker may have taken over.
        let f = try await BroadcastFixture.start(faults: SimulatorFaults(responseDelay: .seconds(20)))
        try f.seed(200)
        try f.create(id: "cut")
        let stop = StopFlag()
        // The requests time out 8 s after they were sent, long after the stop (which comes once the simulator holds
        // them): any request the simulator counts past the first 20 was written after the stop.
        let sender = try f.makeSender(window: 20, requestTimeoutMs: 8000)
        let simulator = f.simulator
        let signal = Task { () -> Bool in
            // Once the window is on the wire (the simulator holds its 20 requests unanswered); false if it never was.
            let held = (try? await waitUntil("the simulator holds the window's 20 requests") { simulator.counters.requests >= 20 }) != nil
            stop.raise(signal: SIGTERM)
            return held
        }
        let report = try await f.run("cut", sender: sender, stop: stop)
        #expect(await signal.value, "the window never reached the simulator")
        #expect(report.record.state == .interrupted)
        #expect(report.signal == SIGTERM)
        #expect(f.simulator.counters.requests == 20)
        try await f.stop()
    }

    @Test func targetsAChannel() async throws {
        let f = try await BroadcastFixture.start()
        let news = try f.seed(300, prefix: "bb", channels: ["news"])
        try f.seed(300, prefix: "cc", channels: ["sports"])
        try f.create(id: "news-1", channel: "news")
        let report = try await f.run("news-1")
        #expect(report.record.total == 300)
        #expect(Set(f.simulator.received.map(\.request.token)) == Set(news))
        try await f.stop()
    }

    @Test func prunedCountsAreWhatTheStoreDeleted() async throws {
        let f = try await BroadcastFixture.start()
        let tokens = try f.seed(1000)
        let dead = Set(tokens.enumerated().filter { $0.offset % 10 == 0 }.map(\.element))
        let later = Int64(Date().timeIntervalSince1970 * 1000) + 60_000
        for token in dead { f.simulator.unregister(token, timestampMs: later) }
        // One dead token registered again after APNs' 410 timestamp: the store keeps it, and it is not counted.
        let reRegistered = try #require(dead.min())
        try f.create(id: "prune-1")
        _ = try await f.registry.run { [registry = f.registry] _ in try registry.register(app: "example", token: reRegistered, environment: .development) }
        f.simulator.unregister(reRegistered, timestampMs: 1)
        let report = try await f.run("prune-1")
        #expect(report.record.state == .completed)
        #expect(report.counts.done == 1000)
        #expect(report.counts.pruned == 99)
        #expect(report.counts.notAcceptedByReason == ["Unregistered": 100])
        let stored1: Int = try await f.registry.run { [registry = f.registry] _ in try registry.count(app: "example") }
        #expect(stored1 == 901)
        let stored2: RegisteredDevice? = try await f.registry.run { [registry = f.registry] _ in try registry.device(app: "example", token: reRegistered) }
        #expect(stored2 != nil)
        let accepted = f.simulator.received.map(\.request.token)
        #expect(Set(accepted) == Set(tokens).subtracting(dead))
        try await f.stop()
    }

    @Test func aTrippedBreakerDeletesNothingAndTheSummarySaysSo() async throws {
        var devices: [DeviceToken: DeviceBehaviour] = [:]
        for token in BroadcastFixture.tokens(1000) { devices[token] = .otherEnvironment }
        let f = try await BroadcastFixture.start(devices: devices)
        try f.seed(1000)
        try f.create(id: "storm")
        let report = try await f.run("storm")
        #expect(report.record.state == .completed)
        #expect(report.counts.notAcceptedByReason == ["BadDeviceToken": 1000])
        #expect(report.counts.pruned == 0)  // not the 49 the sender held before it tripped
        #expect(report.breakerTripped.count == 1)
        let stored3: Int = try await f.registry.run { [registry = f.registry] _ in try registry.count(app: "example") }
        #expect(stored3 == 1000)
        // The tripped state is persisted: the next run starts tripped.
        let stored = try await f.registry.run { [registry = f.registry] _ in try registry.breakerStates(app: "example") }
        #expect(stored.values.contains { $0.tripped })
        try await f.stop()
    }

    @Test func heldBadDeviceTokenPrunesAreAppliedOnlyOnceTheEndpointProvesHealthy() async throws {
        let bad = BroadcastFixture.tokens(10)  // "aa…0" to "aa…9": the first devices in key order
        var devices: [DeviceToken: DeviceBehaviour] = [:]
        for token in bad { devices[token] = .bad }
        let f = try await BroadcastFixture.start(devices: devices)
        try f.seed(300)
        try f.create(id: "held")
        let report = try await f.run("held", sender: try f.makeSender(window: 20))
        #expect(report.counts.notAcceptedByReason == ["BadDeviceToken": 10])
        #expect(report.counts.pruned == 10)  // released after 101 answers, committed, counted by the store
        #expect(report.discardedPrunes == 0)
        let stored4: Int = try await f.registry.run { [registry = f.registry] _ in try registry.count(app: "example") }
        #expect(stored4 == 290)
        try await f.stop()
    }

    @Test func heldPrunesOfAnEndpointThatNeverProvedHealthyAreDiscarded() async throws {
        let bad = BroadcastFixture.tokens(5)
        var devices: [DeviceToken: DeviceBehaviour] = [:]
        for token in bad { devices[token] = .bad }
        let f = try await BroadcastFixture.start(devices: devices)
        try f.seed(50)
        try f.create(id: "small")
        let report = try await f.run("small")
        #expect(report.counts.notAcceptedByReason == ["BadDeviceToken": 5])
        #expect(report.counts.pruned == 0)
        #expect(report.discardedPrunes == 5)
        let stored5: Int = try await f.registry.run { [registry = f.registry] _ in try registry.count(app: "example") }
        #expect(stored5 == 50)
        // The breaker's evidence carries over (persisted): the next, bigger run proves the endpoint healthy and
        // the same BadDeviceToken answers are pruned.
        try f.seed(200, prefix: "bb")
        try f.create(id: "later")
        let later = try await f.run("later", sender: try f.makeSender(breakers: try await f.registry.run { [registry = f.registry] _ in try registry.breakerStates(app: "example") }))
        #expect(later.counts.pruned == 5)
        let stored6: Int = try await f.registry.run { [registry = f.registry] _ in try registry.count(app: "example") }
        #expect(stored6 == 245)
        try await f.stop()
    }

    @Test func deferredDevicesAreRetriedByTheNextRunOfTheSameId() async throws {
        let flaky = BroadcastFixture.tokens(300).suffix(10)
        var devices: [DeviceToken: DeviceBehaviour] = [:]
        for token in flaky { devices[token] = .tooManyRequests }
        let f = try await BroadcastFixture.start(devices: devices)
        try f.seed(300)
        try f.create(id: "flaky")
        let first = try await f.run("flaky", sender: try f.makeSender(maxAttempts: 2))
        #expect(first.record.state == .completed)
        #expect(first.counts.done == 300 && first.record.total == 300)
        #expect(first.counts.deferred == 10)
        #expect(first.counts.notAcceptedByReason == ["TooManyRequests": 10])
        #expect(f.simulator.counters.accepted == 290)
        // APNs stops throttling; the same id again sends exactly the deferred ten.
        for token in flaky { f.simulator.setDevice(token, nil) }
        let second = try await f.run("flaky")
        #expect(second.record.state == .completed)
        #expect(second.sentThisRun == 10)
        #expect(second.counts.deferred == 0)
        #expect(second.counts.accepted == 300)
        #expect(f.simulator.counters.accepted == 300)
        #expect(Set(f.simulator.received.suffix(10).map(\.request.token)) == Set(flaky))
        // And a third run has nothing left to do.
        let third = try await f.run("flaky")
        #expect(third.sentThisRun == 0)
        #expect(f.simulator.counters.accepted == 300)
        try await f.stop()
    }

    @Test func aShardAnotherLiveWorkerHoldsIsWaitedForAndTakenOverWhenItsClaimExpires() async throws {
        let f = try await BroadcastFixture.start()
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
        #expect(f.simulator.received.count == 50)
        #expect(report.workers.count == 1 && report.workers[other] == nil)
        // The run took the shard over under a new fence; the stale claim can no longer write.
        #expect(try blocking { try store.shards(id: "lease-1") }.map(\.fence) == [held.fence + 1])
        let stale = OutcomeBatch(app: "example", job: .init(id: "lease-1", shard: 0, fence: held.fence, run: held.run), outcomes: [])
        #expect { _ = try store.commit(stale) } throws: { ($0 as? DeliveryStoreError)?.code == .leaseLost }
        try await f.stop()
    }
}
