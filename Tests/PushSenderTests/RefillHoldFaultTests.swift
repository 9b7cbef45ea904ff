import PushSimulator
import Foundation
import PushCore
import PushSender
import Testing
import func TestSupport.waitUntil

/// The refill cadence's bound (``RefillCadence``): with a batch's worth on the wire a submit does not wake the
/// connection's loop, so when the server holds every answer nothing else would bring the loop round for up to a
/// second. A notification handed in then must still go out within the hold. (A fault suite, run on its own after the
/// parallel tests: it times a 20 ms bound.)
@Suite(.timeLimit(.minutes(2)))
struct RefillHoldFaultTests {
    @Test func aNotificationHandedInBehindABusyWireGoesOutWithinTheHoldWhenNoAnswerComes() async throws {
        // Every answer but the connection's first held 3 s: no socket activity wakes the loop while the test watches.
        // (The first, alone on the new connection, is answered at once: the transport's new-connection gate.)
        var faults = SimulatorFaults(responseDelay: .seconds(3))
        faults.undelayedStreams = 1
        let sim = try await SimulatorHarness(faults: faults)
        // Window 20: batches of 2, so 10 on the wire is busy and one more neither wakes the loop nor completes a batch.
        let sender = try APNsSender(
            target: sim.target(), credentials: FixedCertificate(tlsIdentity: sim.clientIdentity()),
            configuration: SenderConfiguration(window: 20, requestTimeoutMs: 30_000))
        let (results, continuation) = AsyncStream<DeliveryResult>.makeStream()
        // The first answered, then 10 on the wire.
        for i in 0..<11 { sender.submit(SendItem(sim.request(testToken(i)))) { continuation.yield($0) } }
        try await waitUntil(deadline: .seconds(20), every: .milliseconds(5), "11 requests reached the simulator") {
            sim.simulator.received.count == 11
        }
        let clock = ContinuousClock()
        let start = clock.now
        sender.submit(SendItem(sim.request(testToken(11)))) { continuation.yield($0) }
        try await waitUntil(deadline: .seconds(5), every: .milliseconds(5), "the 12th request reached the simulator") {
            sim.simulator.received.count == 12
        }
        let waited = clock.now - start
        // The hold is 20 ms from the hand-in (measured 20–25 ms); without the bound on the loop's sleep, what brought it
        // round was libcurl's own timer, 210 ms later (measured), or at worst the one-second upkeep limit.
        #expect(waited < .milliseconds(120), "the 12th request waited \(waited) behind a busy wire")
        var accepted = 0
        for await result in results {
            #expect(result.kind == .accepted)
            accepted += 1
            if accepted == 12 { break }
        }
        await sender.shutdown()
        await sim.stop()
    }
}
