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
        // Every answer held 3 s: no socket activity wakes the loop while the test watches.
        let sim = try await SimulatorHarness(faults: SimulatorFaults(responseDelay: .seconds(3)))
        // Window 20: batches of 2, so 10 on the wire is busy and one more neither wakes the loop nor completes a batch.
        let sender = try APNsSender(
            target: sim.target(), credentials: FixedCertificate(tlsIdentity: sim.clientIdentity()),
            configuration: SenderConfiguration(window: 20, requestTimeoutMs: 30_000))
        let (results, continuation) = AsyncStream<DeliveryResult>.makeStream()
        for i in 0..<10 { sender.submit(SendItem(sim.request(testToken(i)))) { continuation.yield($0) } }
        try await waitUntil(deadline: .seconds(20), every: .milliseconds(5), "10 requests reached the simulator") {
            sim.simulator.received.count == 10
        }
        let clock = ContinuousClock()
        let start = clock.now
        sender.submit(SendItem(sim.request(testToken(10)))) { continuation.yield($0) }
        try await waitUntil(deadline: .seconds(5), every: .milliseconds(5), "the 11th request reached the simulator") {
            sim.simulator.received.count == 11
        }
        let waited = clock.now - start
        // The hold is 20 ms from the hand-in (measured 20–25 ms); without the bound on the loop's sleep, what brought it
        // round was libcurl's own timer, 210 ms later (measured), or at worst the one-second upkeep limit.
        #expect(waited < .milliseconds(120), "the 11th request waited \(waited) behind a busy wire")
        var accepted = 0
        for await result in results {
            #expect(result.kind == .accepted)
            accepted += 1
            if accepted == 11 { break }
        }
        await sender.shutdown()
        await sim.stop()
    }
}
