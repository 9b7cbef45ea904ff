import PushSimulator
import Foundation
import PushCore
import Synchronization
import Testing
@testable import PushSender

/// The sender honours the `Retry-After` of a 429/503 answer, read off the wire from the real simulator over TLS
/// and HTTP/2: the retry waits at least that long (measured with the injected sleeper and clock: no timing in
/// the test), a malformed header is ignored, and a wait longer than the limit defers instead of retrying early.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct SenderRetryAfterTests {
    /// Fri, 27 Nov 2026 20:00:05 GMT.
    struct FixedClock: SenderClock { func nowMs() -> Int64 { 1_795_809_605_000 } }

    /// Sends one notification to a device that always answers 429, with the simulator's `Retry-After` set to
    /// `retryAfter`; returns the result and the waits the sender asked for.
    private func tooManyRequests(retryAfter: String?) async throws -> (DeliveryResult, [Int], Int) {
        let token = testToken(21)
        let sim = try await SimulatorHarness(faults: SimulatorFaults(retryAfter: retryAfter), devices: [token: .tooManyRequests])
        let sleeper = RecordingSleeper()
        let sender = try APNsSender(
            target: sim.target(), credentials: FixedCertificate(tlsIdentity: sim.clientIdentity()),
            configuration: SenderConfiguration(requestTimeoutMs: 10_000, maxAttempts: 4), clock: FixedClock(),
            sleeper: sleeper, random: { 0.5 })
        let result = await sender.send(sim.request(token))
        await sender.shutdown()
        let requests = sim.simulator.counters.requests
        await sim.stop()
        return (result, sleeper.delays, requests)
    }

    @Test func aTooManyRequestsWithRetryAfterSecondsDelaysEachRetryByAtLeastThat() async throws {
        let (result, delays, requests) = try await tooManyRequests(retryAfter: "7")
        #expect(result.kind == .deferred && result.status == 429 && result.attempts == 4)
        // The backoff alone would be 500, 1000, 2000 ms (random 0.5).
        #expect(delays == [7000, 7000, 7000])
        #expect(requests == 4)
    }

    @Test func aRetryAfterShorterThanTheBackoffLeavesTheBackoff() async throws {
        let (_, delays, _) = try await tooManyRequests(retryAfter: "1")
        #expect(delays == [1000, 1000, 2000])
    }

    @Test func anHTTPDateRetryAfterIsAWaitFromTheSendersClock() async throws {
        let (_, delays, _) = try await tooManyRequests(retryAfter: "Fri, 27 Nov 2026 20:00:17 GMT")
        #expect(delays == [12_000, 12_000, 12_000])
    }

    @Test func aMalformedRetryAfterIsIgnored() async throws {
        let (result, delays, _) = try await tooManyRequests(retryAfter: "soon")
        #expect(result.kind == .deferred && result.attempts == 4)
        #expect(delays == [500, 1000, 2000])
    }

    @Test func aRetryAfterLongerThanTheLimitDefersWithoutRetrying() async throws {
        let (result, delays, requests) = try await tooManyRequests(retryAfter: "301")
        #expect(result.kind == .deferred && result.status == 429 && result.attempts == 1)
        #expect(result.error?.contains("Retry-After") == true)
        #expect(delays.isEmpty && requests == 1)
    }

    /// The retry rule the APNs sender shares with the others (``WaitingRoom``): a notification waiting out its
    /// backoff comes back unsent, naming the stop, as soon as the run stops, is not sent again, and counts as retried.
    @Test func aRetryWaitingOutItsBackoffComesBackUnsentWhenTheRunStops() async throws {
        let token = testToken(23)
        let sim = try await SimulatorHarness(devices: [token: .tooManyRequests])
        let senderBox = Mutex<APNsSender?>(nil)
        // The run stops while the retry waits: the sleeper is called once the 429 has come back.
        let sleeper = RecordingSleeper { _ in senderBox.withLock { $0 }?.abandonWaiting("the run is stopping") }
        let sender = try APNsSender(
            target: sim.target(), credentials: FixedCertificate(tlsIdentity: sim.clientIdentity()),
            configuration: SenderConfiguration(requestTimeoutMs: 10_000, maxAttempts: 4), sleeper: sleeper, random: { 0.5 })
        senderBox.withLock { $0 = sender }
        let result = await sender.send(sim.request(token))
        let summary = sender.summary
        sender.beginRun()
        let again = await sender.send(sim.request(testToken(24)))
        await sender.shutdown()
        let requests = sim.simulator.counters.requests
        await sim.stop()
        #expect(result.kind == .unsent && result.stop?.kind == .stopping && result.attempts == 1)
        #expect(sleeper.delays == [500])
        #expect(summary.retried == 1)
        // A new run sends again.
        #expect(again.kind == .accepted)
        #expect(requests == 2)
    }

    @Test func aServiceUnavailableWithRetryAfterIsRetriedAfterItThenAccepted() async throws {
        let sim = try await SimulatorHarness(faults: SimulatorFaults(serviceUnavailableFraction: 1, retryAfter: "3"))
        let simulator = sim.simulator
        let sleeper = RecordingSleeper { _ in simulator.faults = SimulatorFaults() }
        let sender = try APNsSender(
            target: sim.target(), credentials: FixedCertificate(tlsIdentity: sim.clientIdentity()),
            configuration: SenderConfiguration(requestTimeoutMs: 10_000, maxAttempts: 4), sleeper: sleeper, random: { 0.5 })
        let result = await sender.send(sim.request(testToken(22)))
        await sender.shutdown()
        await sim.stop()
        #expect(result.kind == .accepted && result.attempts == 2)
        #expect(sleeper.delays == [3000])
        #expect(simulator.counters.byStatus[503] == 1)
    }
}
