import Foundation
import PushCore
import PushDelivery
import PushStore
import Synchronization
import Testing
import TestSupport

/// The engine through its seam alone: a broadcast driven by a ``FakeService`` (no TLS, no
/// simulator) keeps every promise the engine makes whatever service is behind it — each device handed over once
/// per pass, outcomes and prunes committed, counts exact, and a second run sending only the deferred devices.
@Suite(.timeLimit(.minutes(2))) struct DeliverySenderSeamTests {
    @Test func aBroadcastThroughAScriptedSenderCommitsEveryOutcomeAndRunsAgainOnlyForTheDeferred() async throws {
        let dir = try TemporaryDirectories.make("seam")
        let registry = try SQLiteRegistry(path: dir + "/registry.sqlite")
        let tokens = (0..<2000).map { testToken($0) }.sorted()
        try blocking {
            for r in registry.registerBatch(tokens.map { RegistrationRequest(app: "example", token: $0, environment: .production) }) {
                _ = try r.get()
            }
        }
        let dead = Set(tokens.enumerated().filter { $0.offset % 20 == 0 }.map(\.element))      // 100
        let deferred = Set(tokens.enumerated().filter { $0.offset % 20 == 7 }.map(\.element))  // 100
        let prepared = try Payload(aps: APS(alert: .text("Seam"))).prepare()
        try blocking {
            try registry.createBroadcast(BroadcastRecord(
                id: "seam-1", app: "example", payload: prepared.payload, pushType: prepared.pushType, priority: prepared.priority))
        }
        var configuration = BroadcastConfiguration()
        configuration.batchSize = 128
        let broadcaster = Broadcaster(store: registry.deliveryStore, configuration: configuration)

        let first = FakeService(inFlightLimit: 64, rules: FakeService.Rules { token in
            dead.contains(token) ? .gone() : deferred.contains(token) ? .later("ServiceUnavailable") : .accept
        })
        let report = try await broadcaster.run(id: "seam-1", sender: first, stop: StopFlag())
        #expect(report.record.state == .completed)
        #expect(first.submitted.count == 2000)
        #expect(Set(first.submitted) == Set(tokens))
        #expect(report.counts.done == 2000)
        #expect(report.counts.accepted == 1800)
        #expect(report.counts.tokenDead == 100)
        #expect(report.counts.pruned == 100)
        #expect(report.counts.deferred == 100)
        let left: Int = try await registry.run { _ in try registry.count(app: "example") }
        #expect(left == 1900)

        // The same id again: a new round for the deferred devices only, which now go through.
        let second = FakeService(inFlightLimit: 64)
        let again = try await broadcaster.run(id: "seam-1", sender: second, stop: StopFlag())
        #expect(again.record.state == .completed)
        #expect(again.record.run == 2)
        #expect(second.submitted.count == 100)
        #expect(Set(second.submitted) == deferred)
        #expect(again.counts.deferred == 0)
        #expect(again.counts.accepted == 1900)
        try? FileManager.default.removeItem(atPath: dir)
    }
}
