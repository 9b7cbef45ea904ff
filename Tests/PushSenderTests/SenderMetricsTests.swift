import PushSimulator
import Foundation
import PushCore
import Synchronization
import Testing

@testable import PushSender

/// `SenderMetrics`: the figures `/metrics` shows per app, checked on a real sender against the real simulator.
@Suite(.timeLimit(.minutes(2))) struct SenderMetricsTests {
    @Test func latencyGoesIntoPrometheusStyleCumulativeBuckets() {
        let m = SenderMetrics()
        m.answered(afterNanoseconds: 4_000_000)  // 4 ms → le 5 ms
        m.answered(afterNanoseconds: 5_000_000)  // exactly 5 ms → le 5 ms
        m.answered(afterNanoseconds: 5_000_001)  // → le 10 ms
        m.answered(afterNanoseconds: 60_000_000_000)  // a minute → +Inf only
        let h = m.latency
        #expect(h.count == 4)
        #expect(h.cumulative.count == SenderMetrics.latencyBucketsMs.count + 1)
        #expect(h.cumulative[0] == 2 && h.cumulative[1] == 3 && h.cumulative[SenderMetrics.latencyBucketsMs.count - 1] == 3)
        #expect(h.cumulative.last == 4)
        #expect(abs(h.sumSeconds - 60.014000001) < 1e-9)
        m.connectionOpened(first: true)
        m.connectionOpened(first: false)
        #expect(m.connectionsOpened == 2 && m.reconnects == 1)
    }

    @Test func aSenderCountsWhatIsInFlightEveryAnswerAndEachReconnect() async throws {
        var faults = SimulatorFaults()
        faults.responseDelay = .milliseconds(200)
        faults.goAwayAfterStreams = 40  // the connection is closed after 40 requests: the sender must reconnect
        let sim = try await SimulatorHarness(faults: faults)
        var configuration = SenderConfiguration()
        configuration.backoffBaseMs = 1
        configuration.reconnectBaseMs = 1
        let sender = try APNsSender(
            target: sim.target(), credentials: FixedCertificate(tlsIdentity: sim.clientIdentity()), configuration: configuration)
        // 30 at once: when the first result comes back, the other 29 are still in flight (each result is counted
        // out just before it is handed over, one after another).
        let (results, continuation) = AsyncStream<Int>.makeStream()
        for i in 0..<30 {
            sender.submit(SendItem(sim.request(testToken(i)))) { _ in continuation.yield(sender.metrics.inFlight) }
        }
        var seen: [Int] = []
        for await now in results {
            seen.append(now)
            if seen.count == 30 { break }
        }
        let inFlightSeen = Mutex(seen)
        #expect(inFlightSeen.withLock { $0.first ?? 0 } == 29, "all 30 were submitted before the first answer (held 200 ms)")
        #expect(inFlightSeen.withLock { $0.count } == 30)
        #expect(sender.metrics.inFlight == 0)
        #expect(sender.metrics.connectionsOpened == 1 && sender.metrics.reconnects == 0)
        // 20 more one by one (4 s): the 40th request ends the connection, the next ones go over a new one.
        for i in 30..<50 {
            let result = await sender.send(sim.request(testToken(i)))
            #expect(result.kind == .accepted)
        }
        let h = sender.metrics.latency
        #expect(h.count >= 50, "every answer is observed: \(sender.summary)")
        #expect(h.cumulative[4] == 0, "no answer came back within 100 ms: the simulator held each one 200 ms")
        #expect(h.sumSeconds >= 0.2 * Double(h.count))
        #expect(sender.metrics.connectionsOpened >= 2 && sender.metrics.reconnects >= 1, "\(sender.metrics.connectionsOpened) opened")
        #expect(sender.endpointConditions.map(\.endpoint) == [sim.target().description])
        #expect(sender.endpointConditions.first?.reachable == true && sender.endpointConditions.first?.breakerTripped == false)
        await sender.shutdown()
        await sim.stop()
    }
}
