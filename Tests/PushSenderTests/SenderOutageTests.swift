import PushSimulator
import Foundation
import PushCore
import Testing
import func TestSupport.waitUntil
@testable import PushSender

/// The sender when APNs is unreachable, restarts or drops handshakes: transient failures are never final.
/// Real simulator, real sockets; reconnect backoff runs on the real clock (base 50 ms, cap 400 ms).
@Suite(.serialized, .timeLimit(.minutes(1)))
struct SenderOutageTests {
    static func configuration(outageLimitMs: Int = 60_000) -> SenderConfiguration {
        SenderConfiguration(
            connectTimeoutMs: 2000, requestTimeoutMs: 10_000, outageLimitMs: outageLimitMs, reconnectBaseMs: 50,
            reconnectCapMs: 400)
    }

    func makeSender(_ sim: SimulatorHarness, outageLimitMs: Int = 60_000) throws -> APNsSender {
        try APNsSender(
            target: sim.target(), credentials: FixedCertificate(tlsIdentity: sim.clientIdentity()),
            configuration: Self.configuration(outageLimitMs: outageLimitMs))
    }

    @Test func anEndpointDownAtTheStartParksNotificationsAndDeliversThemWhenItIsBack() async throws {
        let sim = try await SimulatorHarness()
        await sim.simulator.suspend()  // connections refused
        let sender = try makeSender(sim)
        let box = ResultBox()
        let simulator = sim.simulator
        let reviver = Task {
            // The outage's length, not a wait for an event: long enough for the reconnect backoff to reach its
            // 400 ms cap and probe at it, which is what the sender must ride out.
            try? await Task.sleep(for: .milliseconds(1500))
            try? await simulator.resume()
        }
        let started = Date()
        await sender.run(requests: (0..<300).map { sim.request(testToken($0)) }) { box.add($0) }
        let waited = Date().timeIntervalSince(started)
        await sender.shutdown()
        _ = await reviver.value
        await sim.stop()
        let results = box.results
        #expect(results.count == 300)
        #expect(results.allSatisfy { $0.kind == .accepted }, "\(Set(results.map { "\($0.kind) \($0.error ?? "")" }))")
        // Never sent while down: one answered attempt each, nothing possibly duplicated.
        #expect(results.allSatisfy { $0.attempts == 1 && !$0.possiblyDuplicated })
        #expect(waited >= 1.4)
        #expect(sender.summary.stops.isEmpty)
        #expect(simulator.counters.requests == 300)
    }

    @Test func anOutageLongerThanTheLimitComesBackUnsentNamingTheOutage() async throws {
        let sim = try await SimulatorHarness()
        await sim.simulator.suspend()
        let sender = try makeSender(sim, outageLimitMs: 1000)
        let box = ResultBox()
        let started = Date()
        await sender.run(requests: (0..<100).map { sim.request(testToken($0)) }) { box.add($0) }
        let waited = Date().timeIntervalSince(started)
        let summary = sender.summary
        await sender.shutdown()
        await sim.stop()
        let results = box.results
        #expect(results.count == 100)
        #expect(results.allSatisfy { $0.kind == .unsent && $0.stop?.kind == .outage })
        #expect(results.allSatisfy { $0.stop?.message.contains("unreachable") == true })
        #expect(results.allSatisfy { $0.stop?.message.contains("refused the credentials") == false })
        #expect(summary.stops.map(\.kind) == [.outage])
        #expect(waited >= 1.0 && waited < 10)
    }

    @Test func aNewRunProbesAgainAfterAnOutageStop() async throws {
        let sim = try await SimulatorHarness()
        await sim.simulator.suspend()
        let sender = try makeSender(sim, outageLimitMs: 300)
        let first = await sender.send(sim.request(testToken(1)))
        #expect(first.kind == .unsent && first.stop?.kind == .outage)
        try await sim.simulator.resume()
        sender.beginRun()
        let second = await sender.send(sim.request(testToken(2)))
        await sender.shutdown()
        await sim.stop()
        #expect(second.kind == .accepted)
    }

    @Test func resetTlsHandshakesAreTransient() async throws {
        let sim = try await SimulatorHarness(faults: SimulatorFaults(resetHandshakes: 3))
        let sender = try makeSender(sim)
        let box = ResultBox()
        await sender.run(requests: (0..<200).map { sim.request(testToken($0)) }) { box.add($0) }
        await sender.shutdown()
        await sim.stop()
        #expect(box.results.count == 200)
        #expect(box.results.allSatisfy { $0.kind == .accepted && !$0.possiblyDuplicated })
        #expect(sim.simulator.counters.handshakeResets == 3)
        #expect(sender.summary.stops.isEmpty)
    }

    @Test func aRestartMidRunLosesNothing() async throws {
        let sim = try await SimulatorHarness(faults: SimulatorFaults(responseDelay: .milliseconds(20)))
        let simulator = sim.simulator
        let sender = try makeSender(sim)
        let box = ResultBox()
        // Restarts APNs once 300 were accepted; false when the run ended first (or 60 s passed).
        let restarter = Task { () -> Bool in
            do {
                try await waitUntil(deadline: .seconds(60), every: .milliseconds(5), "300 accepted") { simulator.counters.accepted >= 300 }
            } catch {
                return false
            }
            await simulator.suspend()
            try? await Task.sleep(for: .milliseconds(800))  // the outage's length, not a wait for an event
            try? await simulator.resume()
            return true
        }
        let requests = (0..<1500).map { sim.request(testToken($0)) }
        await sender.run(requests: requests) { box.add($0) }
        await sender.shutdown()
        restarter.cancel()
        #expect(await restarter.value, "the run ended before APNs was restarted")
        await sim.stop()
        let results = box.results
        #expect(results.count == 1500)
        #expect(results.allSatisfy { $0.kind == .accepted }, "\(Set(results.filter { !$0.isAccepted }.map { "\($0.kind) \($0.error ?? "")" }))")
        #expect(Set(simulator.received.map(\.request.notificationId)).isSuperset(of: requests.map(\.notificationId)))
        // Only requests on the wire when it died can have been processed twice: at most the window. (libcurl
        // itself silently resends a request whose reused connection died before any answer byte, so not every
        // such copy can be flagged possibly duplicated.)
        let copies = Dictionary(grouping: simulator.received.map(\.request.notificationId), by: { $0 }).filter { $0.value.count > 1 }
        #expect(copies.count <= sender.configuration.window)
        #expect(copies.values.allSatisfy { $0.count == 2 })
    }
}
