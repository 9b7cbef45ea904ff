import PushSimulator
import Crypto
import Foundation
import PushCore
import PushSender
import Testing

/// The Web Push sender under connection faults — resets with requests on the wire, connections the service closes
/// (GOAWAY, `Connection: close`), an unreachable origin — against the real simulator. Named a fault suite, so
/// `make test` runs it with the others one test at a time: whether a lost answer's message was processed depends on
/// timing a loaded machine stretches (the parallel phase runs ~600 tests on 2 cores).
@Suite(.serialized, .timeLimit(.minutes(2))) struct WebPushSenderFaultTests {
    @Test func requestsLostWithAResetConnectionAreResentUntilAccepted() async throws {
        // Every connection is reset (TCP RST) when a 6th stream opens on it: the requests on the wire are lost.
        let h = try await WebPushSenderTests.harness(faults: SimulatorFaults(resetAfterRequests: 5))
        defer { Task { await h.stop() } }
        // 30 in flight, 5 answered per connection: an item can be lost more often than the default 10 times.
        let sender = try WebPushSenderTests.sender(
            caFile: h.caFile, allowed: ["127.0.0.1:\(h.port)"], configuration: SenderConfiguration(maxDroppedAttempts: 100))
        let items = try (0..<30).map { try WebPushSenderTests.item(h.simulator.mintWebPushSubscription(), $0) }
        let results = await WebPushSenderTests.sendAll(sender, items)
        await sender.shutdown()
        #expect(results.count == 30 && results.allSatisfy { $0.isAccepted }, "\(results.filter { !$0.isAccepted })")
        #expect(h.simulator.counters.resets > 0)
        #expect(sender.summary.possiblyDuplicated > 0, "requests whose body had left were flagged")
        // Every message arrived. Some arrived more than once: the simulator processed them and the reset lost the
        // answer. Not all of those are flagged possibly duplicated: libcurl itself resends a request whose reused
        // connection died before any answer byte, and reports the later answer as the transfer's only one.
        let received = Set(h.simulator.receivedWebPushes.map(\.subscriptionId))
        #expect(received.count == 30)
    }

    @Test(arguments: [false, true])
    func connectionsTheServiceClosesAreReopenedAndEachMessageIsRecordedOnce(http1Only: Bool) async throws {
        // GOAWAY on HTTP/2, `Connection: close` and a closed connection on HTTP/1.1, every 7 requests.
        let h = try await WebPushSenderTests.harness(faults: SimulatorFaults(goAwayAfterStreams: 7))
        defer { Task { await h.stop() } }
        let sender = try WebPushSenderTests.sender(caFile: h.caFile, allowed: ["127.0.0.1:\(h.port)"], http1Only: http1Only)
        let items = try (0..<40).map { try WebPushSenderTests.item(h.simulator.mintWebPushSubscription(), $0) }
        let results = await WebPushSenderTests.sendAll(sender, items)
        await sender.shutdown()
        #expect(results.count == 40 && results.allSatisfy { $0.isAccepted }, "\(results.filter { !$0.isAccepted })")
        let counts = Dictionary(grouping: h.simulator.receivedWebPushes, by: \.subscriptionId).mapValues(\.count)
        #expect(counts.count == 40 && counts.values.allSatisfy { $0 == 1 })
        #expect(h.simulator.counters.connections > 1, "the fault closed connections")
    }

    @Test func anUnreachableOriginStopsAfterTheOutageLimitWhileAnotherOriginKeepsSending() async throws {
        let h = try await WebPushSenderTests.harness()
        defer { Task { await h.stop() } }
        // Port 1 on this machine refuses connections.
        let sender = try WebPushSenderTests.sender(
            caFile: h.caFile, allowed: ["127.0.0.1:\(h.port)", "127.0.0.1:1"],
            configuration: SenderConfiguration(outageLimitMs: 1500, reconnectBaseMs: 50, reconnectCapMs: 200))
        var items: [SendItem] = []
        for i in 0..<5 { items.append(try WebPushSenderTests.item(h.simulator.mintWebPushSubscription(), i, url: "https://127.0.0.1:1/wp/s\(i)")) }
        for i in 5..<25 { items.append(try WebPushSenderTests.item(h.simulator.mintWebPushSubscription(), i)) }
        let started = Date()
        let results = await WebPushSenderTests.sendAll(sender, items)
        await sender.shutdown()
        let down = results.filter { $0.token.hex < testToken(5).hex }
        #expect(down.count == 5 && down.allSatisfy { $0.kind == .unsent && $0.stop?.kind == .outage })
        #expect(down.first?.stop?.endpoint == "https://127.0.0.1:1")
        #expect(Date().timeIntervalSince(started) >= 1.4, "waited for the outage limit")
        let up = results.filter { $0.token.hex >= testToken(5).hex }
        #expect(up.count == 20 && up.allSatisfy { $0.isAccepted })
        #expect(h.simulator.receivedWebPushes.count == 20)
    }
}
