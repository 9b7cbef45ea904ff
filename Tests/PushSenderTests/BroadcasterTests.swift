import APNsSimulator
import Foundation
import PushCore
import PushSender
import PushStore
import Testing

@Suite(.timeLimit(.minutes(3))) struct BroadcasterTests {
    func broadcaster(_ f: BroadcastFixture, _ configure: (inout BroadcastConfiguration) -> Void = { _ in }) -> Broadcaster {
        var c = BroadcastConfiguration()
        c.batchSize = 250
        configure(&c)
        return Broadcaster(registry: f.registry, bundleId: "com.example.app", configuration: c)
    }

    @Test func sendsOnceToEveryDeviceAndCompletes() async throws {
        let f = try await BroadcastFixture.start()
        let tokens = try f.seed(1200)
        _ = try f.create(id: "digest-1")
        let report = try await broadcaster(f).run(id: "digest-1", stop: StopFlag(), makeSender: f.makeSender)
        #expect(report.record.state == .completed)
        #expect(report.record.total == 1200)
        #expect(report.counts.done == 1200)
        #expect(report.counts.accepted == 1200)
        #expect(report.record.checkpoint == tokens.last?.hex)
        let received = f.simulator.received
        #expect(received.count == 1200)
        #expect(Set(received.map(\.request.token)) == Set(tokens))
        for r in received {
            #expect(r.request.apnsId == APNsID.derived(broadcast: "digest-1", token: r.request.token))
            #expect(r.request.topic == "com.example.app")
        }
        #expect(try f.registry.recentDeliveries(app: "example", limit: 5000).count == 1200)
        try await f.stop()
    }

    @Test func resumesAfterAStopWithoutSendingTwice() async throws {
        let f = try await BroadcastFixture.start()
        let tokens = try f.seed(3000)
        _ = try f.create(id: "digest-2")
        let stop = StopFlag()
        let first = try await broadcaster(f).run(
            id: "digest-2", stop: stop, progressInterval: 0.02,
            progress: { if $0.done >= 500 { stop.raise(SIGTERM) } }, makeSender: { try f.makeSender($0, window: 50) })
        #expect(first.record.state == .interrupted)
        #expect(first.signal == SIGTERM)
        #expect(first.counts.done < 3000)
        #expect(first.counts.done == first.sentThisRun)  // in-flight requests were drained and recorded
        let second = try await broadcaster(f).run(id: "digest-2", stop: StopFlag(), makeSender: f.makeSender)
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

    @Test func targetsAChannel() async throws {
        let f = try await BroadcastFixture.start()
        let news = try f.seed(300, prefix: "bb", channels: ["news"])
        try f.seed(300, prefix: "cc", channels: ["sports"])
        _ = try f.create(id: "news-1", channel: "news")
        let report = try await broadcaster(f).run(id: "news-1", stop: StopFlag(), makeSender: f.makeSender)
        #expect(report.record.total == 300)
        #expect(Set(f.simulator.received.map(\.request.token)) == Set(news))
        try await f.stop()
    }

    @Test func pruningDuringABroadcastSkipsAndRepeatsNothing() async throws {
        let f = try await BroadcastFixture.start()
        let tokens = try f.seed(1000)
        let dead = Set(tokens.enumerated().filter { $0.offset % 10 == 0 }.map(\.element))
        let later = Int64(Date().timeIntervalSince1970 * 1000) + 60_000
        for token in dead { f.simulator.unregister(token, timestampMs: later) }
        _ = try f.create(id: "prune-1")
        let report = try await broadcaster(f).run(id: "prune-1", stop: StopFlag(), makeSender: f.makeSender)
        #expect(report.record.state == .completed)
        #expect(report.counts.done == 1000)
        #expect(report.counts.pruned == 100)
        #expect(report.counts.notAcceptedByReason == ["Unregistered": 100])
        #expect(try f.registry.count(app: "example") == 900)
        let accepted = f.simulator.received.map(\.request.token)
        #expect(accepted.count == 900)
        #expect(Set(accepted) == Set(tokens).subtracting(dead))
        try await f.stop()
    }

    @Test func aSecondRunIsRefusedAndAnExpiredLeaseIsTakenOver() async throws {
        let f = try await BroadcastFixture.start()
        try f.seed(50)
        _ = try f.create(id: "lease-1")
        // A live process (pid 1) holds the lease.
        let other = "\(ProcessInfo.processInfo.hostName):1:other"
        #expect(try f.registry.acquireLease(app: "example", broadcastId: "other-job", owner: other, ttlMs: 60_000) == .acquired)
        await #expect(throws: BroadcastError.self) {
            _ = try await broadcaster(f).run(id: "lease-1", stop: StopFlag(), makeSender: f.makeSender)
        }
        #expect(f.simulator.received.isEmpty)
        // Its lease runs out (a crashed run stops heart-beating): the next run takes over.
        #expect(try f.registry.acquireLease(app: "example", broadcastId: "other-job", owner: other, ttlMs: -1) == .acquired)
        let report = try await broadcaster(f).run(id: "lease-1", stop: StopFlag(), makeSender: f.makeSender)
        #expect(report.record.state == .completed)
        #expect(f.simulator.received.count == 50)
        try await f.stop()
    }
}
