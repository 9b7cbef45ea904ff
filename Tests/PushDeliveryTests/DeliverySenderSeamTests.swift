import Foundation
import PushCore
import PushDelivery
import PushSender
import PushStore
import Synchronization
import Testing
import TestSupport

/// The engine through its seam alone: a broadcast driven by a scripted ``DeliverySender`` (no TLS, no
/// simulator) keeps every promise the engine makes whatever service is behind it — each device handed over once
/// per pass, outcomes and prunes committed, counts exact, and a second run sending only the deferred devices.
@Suite(.timeLimit(.minutes(2))) struct DeliverySenderSeamTests {
    /// Answers each item from a script on a thread of its own, as a transport does, and remembers what it got.
    final class ScriptedSender: DeliverySender {
        let inFlightLimit = 64
        let metrics = SenderMetrics()
        private let script: @Sendable (DeviceToken) -> DeliveryResult.Kind
        private let state = Mutex((submitted: [DeviceToken](), summary: SendSummary()))
        private let queue = DispatchQueue(label: "scripted-transport", attributes: .concurrent)

        init(script: @escaping @Sendable (DeviceToken) -> DeliveryResult.Kind) { self.script = script }

        var submitted: [DeviceToken] { state.withLock { $0.submitted } }
        var summary: SendSummary { state.withLock { $0.summary } }
        var breakerStates: [String: PruningBreaker.State] { [:] }
        var trippedEndpoints: [String] { [] }
        var endpointConditions: [EndpointCondition] { [] }

        func submit(
            _ item: SendItem, onResult: @escaping @Sendable (DeliveryResult) -> Void,
            onPruneReleased: (@Sendable (DeviceToken) -> Void)?
        ) {
            let token = item.request.token
            let kind = script(token)
            state.withLock { s in
                s.submitted.append(token)
                s.summary.finished += 1
                if kind == .accepted { s.summary.accepted += 1 }
            }
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            let (status, reason, prune): (Int, APNsReason?, PruneDecision) = switch kind {
            case .accepted: (200, nil, .none)
            case .tokenDead: (410, .unregistered, .delete(PruneRequest(reason: .unregistered)))
            case .rejected: (400, .badTopic, .none)
            case .deferred: (503, .serviceUnavailable, .none)
            case .unsent: (0, nil, .none)
            }
            let result = DeliveryResult(
                token: token, apnsId: item.request.apnsId, status: status, reason: reason, kind: kind, prune: prune,
                attempts: 1, startedAtMs: now, finishedAtMs: now)
            queue.async { onResult(result) }
        }

        func beginRun() {}
        func abandonWaiting(_ reason: String) {}
        func endRun() -> Int { 0 }
        func shutdown() async {}
    }

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

        let first = ScriptedSender { token in dead.contains(token) ? .tokenDead : deferred.contains(token) ? .deferred : .accepted }
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
        let second = ScriptedSender { _ in .accepted }
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
