import Foundation
import PushCore
import Testing

@testable import PushStore

/// The ``DeliveryStore`` contract on both backends: fenced leases on the store's clock, outcomes and checkpoint
/// in one transaction, pending markers that do not count, deferred devices for the next run, breaker state.
@Suite struct DeliveryStoreConformanceTests {
    struct World {
        let registry: any RegistryStore
        let store: any DeliveryStore
        let clock: ManualClock
        let tokens: [DeviceToken]

        init(_ backend: Backend, devices: Int = 10) throws {
            clock = ManualClock()
            registry = try backend.open(clock: clock)
            store = registry.deliveryStore
            tokens = (0..<devices).map { testToken($0) }.sorted()
            for r in registry.registerBatch(tokens.map { RegistrationRequest(app: "a", token: $0, environment: .production) }) {
                _ = try r.get()
            }
            try registry.createBroadcast(BroadcastRecord(
                id: "b", app: "a", payload: Array(#"{"aps":{"alert":"x"}}"#.utf8), pushType: .alert, priority: .immediate),
                tokens: nil)
        }

        func lease(_ owner: String = "o1", ttlMs: Int64 = 30_000) throws -> Int64 {
            guard case .acquired(let fence) = try store.acquireLease(app: "a", broadcastId: "b", owner: owner, ttlMs: ttlMs, ownerIsDead: { _ in false }) else {
                throw StoreError(.unknown(0), "lease held")
            }
            return fence
        }

        func outcome(_ token: DeviceToken, _ kind: DeliveryOutcome.Kind, prune: PruneRequest? = nil, duplicated: Bool = false) -> DeliveryOutcome {
            DeliveryOutcome(
                token: token, kind: kind, apnsId: APNsID.derived(broadcast: "b", token: token),
                status: kind == .accepted ? 200 : (kind == .tokenDead ? 410 : 0), reason: kind == .tokenDead ? "Unregistered" : nil,
                attempts: 1, possiblyDuplicated: duplicated, prune: prune, startedMs: 1, finishedMs: 2)
        }
    }

    @Test(arguments: Backend.allCases) func aTakenOverLeaseFencesTheOldRunOut(_ backend: Backend) throws {
        let w = try World(backend)
        let first = try w.lease("o1", ttlMs: 1000)
        _ = try w.store.beginRun(id: "b", fence: first)
        // A live other owner is refused while the lease is fresh (on the store's clock)…
        #expect(try w.store.acquireLease(app: "a", broadcastId: "b", owner: "o2", ttlMs: 1000, ownerIsDead: { _ in false }) == .held(broadcastId: "b"))
        // …and takes it over once it expired, under a higher fence.
        w.clock.advance(1001)
        let second = try w.lease("o2")
        #expect(second > first)
        // The old run can no longer renew, mark, commit or finish.
        #expect(try w.store.renewLease(app: "a", fence: first, ttlMs: 1000) == false)
        let batch = OutcomeBatch(app: "a", job: .init(id: "b", fence: first, run: 1, checkpoint: w.tokens[0].hex),
                                 outcomes: [w.outcome(w.tokens[0], .accepted)])
        for attempt in [
            { _ = try w.store.commit(batch) },
            { try w.store.markDispatched(id: "b", fence: first, pass: .main, run: 1, through: w.tokens[3].hex) },
            { try w.store.finishRun(id: "b", fence: first, state: .completed, error: nil, settledDispatched: nil) },
        ] as [() throws -> Void] {
            #expect { try attempt() } throws: { ($0 as? DeliveryStoreError)?.code == .leaseLost }
        }
        let record = try #require(try w.store.broadcast(id: "b"))
        #expect(record.checkpoint == "" && record.dispatched == "" && record.state == .running)
        #expect(try w.store.counts(id: "b").done == 0)
        // Releasing keeps the fence growing: a later owner never reuses an old fence.
        try w.store.releaseLease(app: "a", fence: second)
        #expect(try w.lease("o3") > second)
    }

    @Test(arguments: Backend.allCases) func aCommitWritesOutcomesPrunesAndCheckpointTogetherAndCountsWhatTheStoreDid(_ backend: Backend) throws {
        let w = try World(backend)
        let fence = try w.lease()
        let run = try w.store.beginRun(id: "b", fence: fence)
        #expect(run.total == 10 && run.run == 1 && run.state == .running)
        let t = w.tokens
        let receipt = try w.store.commit(OutcomeBatch(
            app: "a", job: .init(id: "b", fence: fence, run: 1, checkpoint: t[3].hex),
            outcomes: [
                w.outcome(t[0], .accepted), w.outcome(t[1], .tokenDead, prune: PruneRequest(reason: .unregistered)),
                w.outcome(t[2], .deferred), w.outcome(t[3], .accepted, duplicated: true), w.outcome(t[4], .pending),
            ]))
        #expect(receipt.pruned == [t[1]])
        let counts = try w.store.counts(id: "b")
        #expect(counts.done == 4)  // the pending marker is not an outcome
        #expect(counts.accepted == 2 && counts.deferred == 1 && counts.pruned == 1 && counts.possiblyDuplicated == 1)
        #expect(try w.registry.devices("a") == 9)
        #expect(try w.store.broadcast(id: "b")?.checkpoint == t[3].hex)
        #expect(try w.registry.recentDeliveries(app: "a", limit: 100).count == 4)  // pending markers are not delivery-log rows
        let stored = try w.store.storedOutcomes(id: "b", after: "", through: t[9].hex)
        #expect(stored[t[4].hex]?.kind == .pending)
        #expect(stored[t[2].hex] == StoredOutcome(kind: .deferred, possiblyDuplicated: false, run: 1))
        // A prune the breaker released later marks the outcome row pruned, in the store's count.
        let released = try w.store.commit(OutcomeBatch(
            app: "a", job: .init(id: "b", fence: fence, run: 1), outcomes: [w.outcome(t[5], .tokenDead)], releasedPrunes: [t[5]]))
        #expect(released.pruned == [t[5]])
        #expect(try w.store.counts(id: "b").pruned == 2)
        // Completing sets total to the devices with an outcome.
        try w.store.finishRun(id: "b", fence: fence, state: .completed, error: nil, settledDispatched: nil)
        let done = try #require(try w.store.broadcast(id: "b"))
        #expect(done.state == .completed && done.total == 5 && done.finishedMs != nil)
    }

    @Test(arguments: Backend.allCases) func deferredDevicesAreTheNextRunsTargetsAndOnlyTheirs(_ backend: Backend) throws {
        let w = try World(backend)
        let t = w.tokens
        let fence = try w.lease()
        _ = try w.store.beginRun(id: "b", fence: fence)
        _ = try w.store.commit(OutcomeBatch(
            app: "a", job: .init(id: "b", fence: fence, run: 1),
            outcomes: [w.outcome(t[1], .deferred), w.outcome(t[2], .accepted), w.outcome(t[6], .deferred, duplicated: true)]))
        #expect(try w.store.deferredTargets(id: "b", beforeRun: 1, after: "", limit: 10).isEmpty)  // not this run's own
        try w.store.finishRun(id: "b", fence: fence, state: .completed, error: nil, settledDispatched: nil)
        let next = try w.store.beginRun(id: "b", fence: fence)
        #expect(next.run == 2)
        let page = try w.store.deferredTargets(id: "b", beforeRun: next.run, after: "", limit: 1)
        #expect(page.map(\.target.token) == [t[1]])
        let rest = try w.store.deferredTargets(id: "b", beforeRun: next.run, after: t[1].hex, limit: 10)
        #expect(rest.map(\.target.token) == [t[6]])
        #expect(rest.first?.previous.possiblyDuplicated == true)
        #expect(rest.first?.target.environment == .production)
        // Retried in run 2: no longer a target of run 2's pass.
        _ = try w.store.commit(OutcomeBatch(app: "a", job: .init(id: "b", fence: fence, run: 2), outcomes: [w.outcome(t[1], .accepted)]))
        #expect(try w.store.deferredTargets(id: "b", beforeRun: 2, after: "", limit: 10).map(\.target.token) == [t[6]])
        try w.store.markDispatched(id: "b", fence: fence, pass: .retry, run: 2, through: t[6].hex)
        let marked = try #require(try w.store.broadcast(id: "b"))
        #expect(marked.retryRun == 2 && marked.retryDispatched == t[6].hex)
    }

    @Test(arguments: Backend.allCases) func dispatchMarksOnlyRiseAndSettleBackAfterAGracefulStop(_ backend: Backend) throws {
        let w = try World(backend)
        let t = w.tokens
        let fence = try w.lease()
        _ = try w.store.beginRun(id: "b", fence: fence)
        try w.store.markDispatched(id: "b", fence: fence, pass: .main, run: 1, through: t[7].hex)
        try w.store.markDispatched(id: "b", fence: fence, pass: .main, run: 1, through: t[3].hex)
        #expect(try w.store.broadcast(id: "b")?.dispatched == t[7].hex)
        try w.store.finishRun(id: "b", fence: fence, state: .interrupted, error: "interrupted by signal 15", settledDispatched: t[4].hex)
        let record = try #require(try w.store.broadcast(id: "b"))
        #expect(record.dispatched == t[4].hex && record.state == .interrupted && record.error == "interrupted by signal 15")
        #expect(try w.store.unfinishedBroadcasts().map(\.id) == ["b"])
    }

    @Test(arguments: Backend.allCases) func pagesOfDevicesComeInTokenOrder(_ backend: Backend) throws {
        let w = try World(backend, devices: 25)
        var seen: [DeviceToken] = []
        var after = ""
        while true {
            let page = try w.store.devices(app: "a", channel: nil, environment: nil, after: after, limit: 10)
            seen += page.map(\.token)
            guard page.count == 10, let last = page.last else { break }
            after = last.token.hex
        }
        #expect(seen == w.tokens)
        let record = try #require(try w.store.broadcast(id: "b"))
        #expect(try w.store.targets(of: record, after: w.tokens[19].hex, limit: 100).map(\.token) == Array(w.tokens[20...]))
    }

    @Test(arguments: Backend.allCases) func breakerStateIsKeptPerEndpoint(_ backend: Backend) throws {
        let w = try World(backend)
        #expect(try w.store.breakerStates(app: "a").isEmpty)
        let states = [
            "https://api.push.apple.com:443": PruningBreaker.State(answers: 120, badDeviceTokens: 3, consecutive: 0, tripped: false),
            "https://api.sandbox.push.apple.com:443": PruningBreaker.State(answers: 0, badDeviceTokens: 0, consecutive: 0, tripped: true),
        ]
        try w.store.saveBreakerStates(app: "a", states)
        #expect(try w.store.breakerStates(app: "a") == states)
        #expect(try w.store.breakerStates(app: "other").isEmpty)
    }
}
