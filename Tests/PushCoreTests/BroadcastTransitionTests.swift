import PushCore
import Testing

/// The broadcast and shard state machine and the lease rule as pure functions: what every backend stores.
struct BroadcastTransitionTests {
    func record(_ state: BroadcastState, error: String? = nil, finishedMs: Int64? = nil) -> BroadcastRecord {
        BroadcastRecord(
            id: "b", app: "a", state: state, payload: [], pushType: .alert, priority: .immediate, error: error, finishedMs: finishedMs)
    }

    @Test func theNamedSetsSplitEveryStateIntoUnfinishedOrEndedAndAClaimMovesExactlyTheResumableOnes() {
        #expect(Set(BroadcastState.unfinished).union(BroadcastState.ended) == Set(BroadcastState.allCases))
        #expect(Set(BroadcastState.unfinished).isDisjoint(with: BroadcastState.ended))
        #expect(BroadcastState.allCases.filter(\.isUnfinished) == BroadcastState.unfinished)
        #expect(BroadcastState.changed(by: .claim) == BroadcastState.resumable)
        #expect(BroadcastState.changed(by: .resume) == BroadcastState.resumable)
        #expect(BroadcastState.changed(by: .cancel) == BroadcastState.unfinished)
        #expect(Set(BroadcastState.workable).isSubset(of: BroadcastState.unfinished))
    }

    @Test func aClaimOrResumeRunsAnUnfinishedBroadcastAndNeverRevivesAnEndedOne() {
        for state in BroadcastState.allCases {
            let change = record(state).after(.claim, now: 5)
            switch state {
            case .pending, .interrupted, .failed: #expect(change?.state == .running && change?.updatedMs == 5)
            case .running, .completed, .cancelled: #expect(change == nil)
            }
            #expect(record(state).after(.resume, now: 5) == change)
        }
    }

    @Test func cancellingStampsTheEndOfAnUnfinishedBroadcastAndLeavesAnEndedOneAlone() {
        for state in BroadcastState.allCases {
            let change = record(state, error: "e").after(.cancel, now: 7)
            if state.isUnfinished {
                #expect(change == BroadcastChange(state: .cancelled, error: "e", updatedMs: 7, finishedMs: 7, completes: false))
            } else {
                #expect(change == nil)
            }
        }
    }

    @Test func aStopInterruptsAnUnfinishedBroadcastOnlyWhenNoLeaseIsLiveAndAlwaysKeepsItsReason() {
        for state in BroadcastState.allCases {
            let alone = record(state).after(.stopped(error: "signal 15", liveLease: false), now: 9)
            let beside = record(state).after(.stopped(error: "signal 15", liveLease: true), now: 9)
            #expect(alone?.state == (state.isUnfinished ? .interrupted : state))
            #expect(beside?.state == state)
            #expect(alone?.error == "signal 15" && beside?.error == "signal 15" && alone?.updatedMs == 9)
        }
    }

    @Test func theLastShardFinishedCompletesOnceClearsTheErrorAndAsksForTheTotal() {
        let done = record(.running, error: "APNs unreachable").after(.shardEnded(.finished, shardsLeft: 0, liveLease: false), now: 11)
        #expect(done == BroadcastChange(state: .completed, error: nil, updatedMs: 11, finishedMs: 11, completes: true))
        // Already completed and stamped (a new round clears the stamp): nothing is stamped twice.
        let again = record(.completed, finishedMs: 3).after(.shardEnded(.finished, shardsLeft: 0, liveLease: false), now: 11)
        #expect(again?.state == .completed && again?.finishedMs == 3 && again?.completes == false)
        // Not the last: the state stays.
        let notLast = record(.running).after(.shardEnded(.finished, shardsLeft: 2, liveLease: false), now: 11)
        #expect(notLast?.state == .running && notLast?.completes == false)
        var counts = BroadcastCounts()
        counts.add(kind: .accepted, reason: "", devices: 7, retried: 0, possiblyDuplicated: 0, pruned: 0)
        counts.add(kind: .deferred, reason: "TooManyRequests", devices: 2, retried: 0, possiblyDuplicated: 0, pruned: 0)
        counts.add(kind: .pending, reason: "", devices: 5, retried: 0, possiblyDuplicated: 0, pruned: 0)
        #expect(BroadcastChange.total(from: counts) == 9)
    }

    @Test func aShardGivenBackInterruptsOnlyWhenNoOtherLeaseIsLiveAndACancelledBroadcastStaysCancelled() {
        let end = ShardEnd.released(error: "APNs unreachable", retryAfterMs: 0, mainDone: false, settledDispatched: nil)
        let alone = record(.running).after(.shardEnded(end, shardsLeft: 3, liveLease: false), now: 1)
        let beside = record(.running).after(.shardEnded(end, shardsLeft: 3, liveLease: true), now: 1)
        #expect(alone?.state == .interrupted && alone?.error == "APNs unreachable")
        #expect(beside?.state == .running && beside?.error == "APNs unreachable")
        let quiet = ShardEnd.released(error: nil, retryAfterMs: 0, mainDone: true, settledDispatched: nil)
        #expect(record(.running, error: "old").after(.shardEnded(quiet, shardsLeft: 1, liveLease: true), now: 1)?.error == "old")
        for ending in [end, .finished] {
            let cancelled = record(.cancelled, finishedMs: 4).after(.shardEnded(ending, shardsLeft: 0, liveLease: false), now: 1)
            #expect(cancelled?.state == .cancelled && cancelled?.finishedMs == 4 && cancelled?.completes == false)
        }
        #expect(BroadcastShard.State.after(.finished) == .done && BroadcastShard.State.after(end) == .pending)
    }

    @Test func aLeaseIsLiveThroughItsExpiryMillisecondAndNotAfter() {
        #expect(ShardLease.isLive(expiresMs: 100, now: 99))
        #expect(ShardLease.isLive(expiresMs: 100, now: 100))
        #expect(!ShardLease.isLive(expiresMs: 100, now: 101))
        #expect(ShardLease.liveSQL(expires: "s.expires_ms", now: "$1") == "($1 <= s.expires_ms)")
    }

    @Test func holdersAreTheProcessesOfLiveClaimsInShardOrderEachOnce() {
        func shard(_ index: Int, _ state: BroadcastShard.State, _ owner: String, expires: Int64) -> BroadcastShard {
            BroadcastShard(broadcastId: "b", index: index, lo: "", hi: "g", state: state, owner: owner, expiresMs: expires)
        }
        let shards = [
            shard(0, .claimed, "h:2:x", expires: 100), shard(1, .claimed, "h:1:y", expires: 100),
            shard(2, .claimed, "h:2:z", expires: 100), shard(3, .claimed, "h:3:w", expires: 99),
            shard(4, .pending, "", expires: 0), shard(5, .done, "h:4:v", expires: 500),
        ]
        #expect(ShardLease.holders(of: shards, now: 100) == ["h:2", "h:1"])
        #expect(ShardLease.holders(of: shards, now: 99) == ["h:2", "h:1", "h:3"])
        #expect(ShardLease.holders(of: shards, now: 100, except: "h:2:x") == ["h:1", "h:2"])
        #expect(ShardLease.holders(of: shards, now: 101).isEmpty)
    }

    @Test func aJobOfWavesCancelledAfterSomeWentOutIsCancelledAndOneStillGoingIsNot() {
        #expect(BroadcastState.aggregate([.completed, .cancelled, .cancelled]) == .cancelled)
        #expect(BroadcastState.aggregate([.completed, .completed]) == .completed)
        #expect(BroadcastState.aggregate([.cancelled, .cancelled]) == .cancelled)
        #expect(BroadcastState.aggregate([.completed, .cancelled, .pending]) == .running)
        #expect(BroadcastState.aggregate([.cancelled, .pending, .pending]) == .pending)
        #expect(BroadcastState.aggregate([.completed, .cancelled, .interrupted]) == .interrupted)
        // What the job shows is what running it again says of it.
        #expect(RunAgain.Found.localTime(waveStates: [.completed, .cancelled], sameJob: true).state
            == BroadcastState.aggregate([.completed, .cancelled]))
    }
}
