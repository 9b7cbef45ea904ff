import PushSimulator
import Foundation
import PushCore
import PushDelivery
import PushSender
import PushStore
import Testing
import TestSupport

/// A broadcast through the real APNs sender and the simulator, where the engine's promises depend on the sender's:
/// a stop while requests are on the wire, and the pruning breaker's held and discarded prunes.
@Suite(.timeLimit(.minutes(2))) struct BroadcastThroughTheSenderTests {
    @Test func aStopWhileTheWindowWaitsForAnswersDrainsWithoutWritingAnythingAgain() async throws {
        // After the connection's first answer (the transport's new-connection gate lets one request alone onto a new
        // connection) no answer comes (as for a host that lost its link): the window fills and the loop waits for a
        // slot. SIGTERM then must still reach the sender at once, so the requests that time out come back unsent
        // (pending, possibly sent) instead of being written again after another worker may have taken over.
        var faults = SimulatorFaults(responseDelay: .seconds(20))
        faults.undelayedStreams = 1
        let f = try await BroadcastFixture.start(faults: faults)
        try f.seed(200)
        try f.create(id: "cut")
        let stop = StopFlag()
        // The requests time out 8 s after they were sent, long after the stop (which comes once the simulator holds
        // them): any request the simulator counts past the first 20 was written after the stop.
        let sender = try f.makeSender(window: 20, requestTimeoutMs: 8000)
        let simulator = f.simulator
        let signal = Task { () -> Bool in
            // Once the window is on the wire (the first request answered, then the simulator holds 20 unanswered);
            // false if it never was. The simulator counts a request when it decides its answer, before the delay.
            let held = (try? await waitUntil("the simulator holds the window's 20 requests") { simulator.counters.requests >= 21 }) != nil
            stop.raise(signal: SIGTERM)
            return held
        }
        let report = try await f.run("cut", sender: sender, stop: stop)
        #expect(await signal.value, "the window never reached the simulator")
        #expect(report.record.state == .interrupted)
        #expect(report.signal == SIGTERM)
        #expect(f.simulator.counters.requests == 21)
        try await f.stop()
    }

    @Test func aStopWhileANewConnectionWaitsForItsFirstAnswerWritesNothingMore() async throws {
        // No answer comes from the first request: the new-connection gate holds the rest of the window in the
        // transport. A stop must bring those back unsent (never written), and the one on the wire times out unsent.
        let f = try await BroadcastFixture.start(faults: SimulatorFaults(responseDelay: .seconds(20)))
        try f.seed(200)
        try f.create(id: "gate")
        let stop = StopFlag()
        let sender = try f.makeSender(window: 20, requestTimeoutMs: 8000)
        let simulator = f.simulator
        let signal = Task { () -> Bool in
            let held = (try? await waitUntil("the simulator holds the first request") { simulator.counters.requests >= 1 }) != nil
            stop.raise(signal: SIGTERM)
            return held
        }
        let report = try await f.run("gate", sender: sender, stop: stop)
        #expect(await signal.value, "the first request never reached the simulator")
        #expect(report.record.state == .interrupted)
        #expect(report.signal == SIGTERM)
        #expect(f.simulator.counters.requests == 1, "a request was written after the stop")
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

}
