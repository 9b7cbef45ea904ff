import Foundation
import PushCore
import Testing

@testable import PushStore
import TestSupport

/// The broadcast and shard state machine on both backends: from every state, every event stores exactly what
/// ``BroadcastRecord/after(_:now:)`` decides; the lease rule's boundary; the completion total; and a state this
/// version cannot read.
@Suite struct BroadcastStateConformanceTests {
    typealias World = DeliveryStoreConformanceTests.World

    /// The events a backend can be driven through, each set up so the pure function's inputs are known.
    enum Drive: String, CaseIterable {
        case claim, cancel, stopAlone, stopBesideLiveLease, finishLastShard, finishOneOfTwo, giveBackAlone, giveBackBesideLiveLease
    }

    /// A broadcast `id` of two shards (devices 0–4 and 5–9), running.
    func start(_ id: String, in w: World) throws {
        try w.registry.createBroadcast(BroadcastRecord(
            id: id, app: "a", payload: Array(#"{"aps":{"alert":"s"}}"#.utf8), pushType: .alert, priority: .immediate), tokens: nil)
        let started = try w.store.startBroadcast(id: id, shardSize: 5, newRound: true)
        let shards = try w.store.shards(id: id)
        #expect(started.state == .running && shards.count == 2)
    }

    func claim(_ id: String, _ owner: String, in w: World) throws -> BroadcastShard? {
        try w.store.claimShard(broadcastId: id, apps: nil, owner: owner, ttlMs: 30_000, ownerIsDead: { _ in false })
    }

    @Test(arguments: Backend.allCases) func everyEventFromEveryStateStoresWhatTheTransitionFunctionDecides(_ backend: Backend) throws {
        let w = try World(backend, devices: 10)
        let giveBack = ShardEnd.released(error: "APNs unreachable", retryAfterMs: 0, mainDone: false, settledDispatched: nil)
        for state in BroadcastState.allCases {
            for drive in Drive.allCases {
                let id = "\(state.rawValue)-\(drive.rawValue)"
                try start(id, in: w)
                // Claims made while it runs; then the state under test is written as a stored row would hold it.
                var held: [BroadcastShard] = []
                switch drive {
                case .claim, .cancel, .stopAlone: break
                case .stopBesideLiveLease, .finishOneOfTwo, .giveBackAlone: held = [try #require(try claim(id, "o1", in: w))]
                case .finishLastShard:
                    let first = try #require(try claim(id, "o1", in: w))
                    _ = try w.store.finishShard(id: id, index: first.index, fence: first.fence, end: .finished)
                    held = [try #require(try claim(id, "o2", in: w))]
                case .giveBackBesideLiveLease:
                    held = [try #require(try claim(id, "o1", in: w)), try #require(try claim(id, "o2", in: w))]
                }
                try w.registry.executeRaw("UPDATE broadcasts SET state = '\(state.rawValue)' WHERE id = '\(id)'")
                w.clock.advance(10)
                let before = try #require(try w.store.broadcast(id: id))
                let now = w.clock.now
                let event: BroadcastEvent
                var returned: BroadcastState?
                switch drive {
                case .claim:
                    event = .claim
                    let shard = try claim(id, "o9", in: w)
                    // Workers claim the shards of workable broadcasts only.
                    #expect((shard != nil) == BroadcastState.workable.contains(state), "\(id)")
                    if shard == nil {
                        #expect(try w.store.broadcast(id: id)?.state == state, "\(id)")
                        continue
                    }
                case .cancel:
                    event = .cancel
                    returned = try w.registry.cancelBroadcast(id: id, app: "a")?.state
                case .stopAlone, .stopBesideLiveLease:
                    event = .stopped(error: "signal 15", liveLease: drive == .stopBesideLiveLease)
                    try w.store.noteStopped(id: id, error: "signal 15")
                case .finishLastShard, .finishOneOfTwo:
                    event = .shardEnded(.finished, shardsLeft: drive == .finishLastShard ? 0 : 1, liveLease: false)
                    returned = try w.store.finishShard(id: id, index: held[0].index, fence: held[0].fence, end: .finished)
                case .giveBackAlone, .giveBackBesideLiveLease:
                    event = .shardEnded(giveBack, shardsLeft: 2, liveLease: drive == .giveBackBesideLiveLease)
                    returned = try w.store.finishShard(id: id, index: held[0].index, fence: held[0].fence, end: giveBack)
                }
                let change = before.after(event, now: now)
                let after = try #require(try w.store.broadcast(id: id))
                let expected = change?.state ?? state
                #expect(after.state == expected, "\(id)")
                if let returned { #expect(returned == expected, "\(id)") }
                #expect(after.error == (change?.error ?? before.error), "\(id)")
                #expect(after.finishedMs == (change?.finishedMs ?? before.finishedMs), "\(id)")
                #expect(after.updatedMs == (change == nil ? before.updatedMs : now), "\(id)")
                if change?.completes == true {
                    #expect(after.total == BroadcastChange.total(from: try w.registry.broadcastCounts(id: id)), "\(id)")
                }
            }
        }
    }

    @Test(arguments: Backend.allCases) func aLeaseIsLiveThroughItsExpiryMillisecondAndTakenOverOnlyAfter(_ backend: Backend) throws {
        let w = try World(backend)
        let first = try #require(try w.claim("host:1:a", ttlMs: 1_000))
        w.clock.advance(1_000)  // now == expiresMs: still held
        #expect(try w.store.holders(of: "b") == ["host:1"])
        #expect(try w.store.holders(of: "b", except: "host:1:a").isEmpty)
        #expect(try w.claim("host:2:b") == nil)
        try w.store.noteStopped(id: "b", error: "signal 15 elsewhere")
        #expect(try w.store.broadcast(id: "b")?.state == .running)
        w.clock.advance(1)  // one millisecond later: expired, nobody holds it, and it is claimable
        #expect(try w.store.holders(of: "b").isEmpty)
        let second = try #require(try w.claim("host:2:b"))
        #expect(second.index == first.index && second.fence == first.fence + 1)
        #expect(try w.store.holders(of: "b") == ["host:2"])
    }

    @Test(arguments: Backend.allCases) func aCompletedBroadcastsTotalIsItsDevicesWithAnOutcomeFinalOrDeferred(_ backend: Backend) throws {
        let w = try World(backend, devices: 10, shardSize: 5)
        let t = w.tokens
        var committed = 0
        while let shard = try w.claim() {
            let range = shard.index == 0 ? 0..<5 : 5..<10
            // Per shard: three accepted (the engine's tally), one deferred, one left pending (not an outcome).
            let batch = OutcomeBatch(
                app: "a", job: w.job(shard, checkpoint: t[range.upperBound - 1].hex, accepted: 3),
                outcomes: [w.outcome(t[range.lowerBound + 3], .deferred), w.outcome(t[range.lowerBound + 4], .pending)])
            _ = try w.store.commit(batch)
            committed += 4
            _ = try w.store.finishShard(id: "b", index: shard.index, fence: shard.fence, end: .finished)
        }
        let record = try #require(try w.store.broadcast(id: "b"))
        let counts = try w.registry.broadcastCounts(id: "b")
        #expect(record.state == .completed && record.finishedMs != nil)
        #expect(counts.done == committed && counts.deferred == 2)
        #expect(record.total == committed)
    }

    @Test(arguments: Backend.allCases) func aBroadcastStateThisVersionCannotReadIsCorruptAndNothingIsWritten(_ backend: Backend) throws {
        let w = try World(backend)
        let shard = try #require(try w.claim())
        // A state a newer version wrote (its schema allowing it).
        switch backend {
        case .sqlite:
            try w.registry.executeRaw("""
                PRAGMA ignore_check_constraints = ON;
                UPDATE broadcasts SET state = 'paused' WHERE id = 'b';
                PRAGMA ignore_check_constraints = OFF
                """)
        case .postgres:
            try w.registry.executeRaw("""
                ALTER TABLE broadcasts DROP CONSTRAINT broadcasts_state_check;
                UPDATE broadcasts SET state = 'paused' WHERE id = 'b'
                """)
        }
        let finishing = #expect(throws: StoreError.self) {
            try w.store.finishShard(id: "b", index: shard.index, fence: shard.fence, end: .finished)
        }
        let stopping = #expect(throws: StoreError.self) { try w.store.noteStopped(id: "b", error: "signal 15") }
        let cancelling = #expect(throws: StoreError.self) { try w.registry.cancelBroadcast(id: "b", app: "a") }
        #expect(finishing?.code == .corrupt && stopping?.code == .corrupt && cancelling?.code == .corrupt)
        // Nothing half-way: the shard is still held under its fence, the broadcast row untouched.
        let after = try #require(try w.store.shards(id: "b").first)
        #expect(after.state == .claimed && after.fence == shard.fence)
        #expect(try w.store.renewShard(id: "b", index: shard.index, fence: shard.fence, ttlMs: 30_000))
    }
}
