import Foundation
import PushCore
import Testing

@testable import PushStore
import TestSupport

/// The ``DeliveryStore`` contract on both backends: broadcasts split into shards, claims fenced on the store's
/// clock, outcomes and the shard checkpoint in one transaction, pending markers that do not count, deferred
/// devices for the next claim, completion by the last shard, per-worker counts, breaker state.
@Suite struct DeliveryStoreConformanceTests {
    struct World {
        let registry: any RegistryStore
        let store: any DeliveryStore
        let clock: ManualClock
        let tokens: [DeviceToken]

        init(_ backend: Backend, devices: Int = 10, shardSize: Int = 1000) throws {
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
            _ = try store.startBroadcast(id: "b", shardSize: shardSize, newRound: true)
        }

        /// Registers `requests`, starts `record` in shards of 5 (expecting `total` targeted devices) and returns each
        /// shard's target count and all targets in shard order.
        func cutBroadcast(
            _ requests: [RegistrationRequest], _ record: BroadcastRecord, total: Int
        ) throws -> (sizes: [Int], targets: [DeviceToken]) {
            for r in registry.registerBatch(requests) { _ = try r.get() }
            try registry.createBroadcast(record, tokens: nil)
            let started = try store.startBroadcast(id: record.id, shardSize: 5, newRound: true)
            #expect(started.total == total)
            var sizes: [Int] = [], all: [DeviceToken] = []
            for shard in try store.shards(id: record.id) {
                let targets = try store.targets(of: started, after: shard.lo, through: shard.hi, limit: 100).map(\.token)
                all += targets
                sizes.append(targets.count)
            }
            return (sizes, all)
        }

        func claim(_ owner: String = "o1", ttlMs: Int64 = 30_000) throws -> BroadcastShard? {
            try store.claimShard(broadcastId: "b", apps: nil, owner: owner, ttlMs: ttlMs, ownerIsDead: { _ in false })
        }

        func job(_ shard: BroadcastShard, checkpoint: String? = nil, accepted: Int = 0, duplicated: Int = 0) -> OutcomeBatch.Job {
            .init(id: "b", shard: shard.index, fence: shard.fence, run: shard.run, checkpoint: checkpoint,
                  accepted: AcceptedTally(count: accepted, retried: 0, possiblyDuplicated: duplicated))
        }

        func outcome(
            _ token: DeviceToken, _ kind: DeliveryOutcome.Kind, prune: PruneRequest? = nil, duplicated: Bool = false,
            mayHaveRow: Bool = false, attempts: Int = 1
        ) -> DeliveryOutcome {
            var o = DeliveryOutcome(
                token: token, kind: kind, notificationId: NotificationID.derived(broadcast: "b", token: token),
                status: kind == .accepted ? 200 : (kind == .tokenDead ? 410 : (kind == .rejected ? 400 : 0)),
                reason: kind == .tokenDead ? "Unregistered" : (kind == .rejected ? "BadTopic" : nil),
                attempts: attempts, possiblyDuplicated: duplicated, prune: prune, startedMs: 1, finishedMs: 2)
            o.mayHaveRow = mayHaveRow
            return o
        }
    }

    @Test(arguments: Backend.allCases) func aStoredRateIsOneScheduleEveryHandleReservesAgainst(_ backend: Backend) throws {
        let w = try World(backend)
        #expect(try w.store.reserveSends(id: "b", count: 50) == nil)  // no rate: nothing to wait for
        try w.store.setRate(id: "b", perSecond: 500)
        // Another process's handle on the same database shares the schedule: 50 at 500/s is 100 ms each.
        let other: any DeliveryStore = switch backend {
        case .sqlite: try SQLiteRegistry(path: w.registry.location, nowMs: w.clock.function).deliveryStore
        case .postgres:
            try PostgresRegistry(url: PostgresURL(parsing: w.registry.location), password: nil, connections: 1, nowMs: w.clock.function)
                .deliveryStore
        }
        #expect(try w.store.reserveSends(id: "b", count: 50) == RateReservation(waitMs: 0, perSecond: 500))
        #expect(try other.reserveSends(id: "b", count: 50)?.waitMs == 100)
        #expect(try w.store.reserveSends(id: "b", count: 50)?.waitMs == 200)
        // Giving back what was not sent frees its time for the next reservation.
        _ = try w.store.reserveSends(id: "b", count: -50)
        #expect(try other.reserveSends(id: "b", count: 50)?.waitMs == 200)
        // The same rate again (a second run of the id) keeps the schedule; a new rate starts a new one; no rate, no schedule.
        try w.store.setRate(id: "b", perSecond: 500)
        #expect(try w.store.reserveSends(id: "b", count: 50)?.waitMs == 300)
        try w.store.setRate(id: "b", perSecond: 1000)
        #expect(try other.reserveSends(id: "b", count: 50) == RateReservation(waitMs: 0, perSecond: 1000))
        try w.store.setRate(id: "b", perSecond: nil)
        #expect(try other.reserveSends(id: "b", count: 50) == nil)
    }

    @Test(arguments: Backend.allCases) func aCommitAfterACancelIsRecordedAndSaysTheBroadcastWasCancelled(_ backend: Backend) throws {
        let w = try World(backend)
        let shard = try #require(try w.claim())
        let before = try w.store.commit(OutcomeBatch(app: "a", job: w.job(shard, accepted: 1), outcomes: [w.outcome(w.tokens[0], .accepted)]))
        #expect(before.cancelled == false)
        #expect(try w.registry.cancelBroadcast(id: "b", app: "a")?.state == .cancelled)
        // What was in flight when the cancel came is still recorded; the receipt tells the run to stop.
        let after = try w.store.commit(OutcomeBatch(app: "a", job: w.job(shard, accepted: 1), outcomes: [
            w.outcome(w.tokens[1], .accepted), w.outcome(w.tokens[2], .tokenDead),
        ]))
        #expect(after.cancelled)
        #expect(try w.store.counts(id: "b").done == 3)
        // A send (no broadcast) is never cancelled.
        #expect(try w.store.commit(OutcomeBatch(app: "a", outcomes: [w.outcome(w.tokens[3], .accepted)])).cancelled == false)
    }

    @Test(arguments: Backend.allCases) func aTakenOverShardFencesTheOldClaimOut(_ backend: Backend) throws {
        let w = try World(backend)
        let first = try #require(try w.claim("o1", ttlMs: 1000))
        #expect(first.index == 0 && first.fence == 1 && first.run == 1 && first.lo == "" && first.hi == BroadcastShard.keySpaceEnd)
        // Another live worker finds nothing to claim while the claim is fresh (on the store's clock)…
        #expect(try w.claim("o2") == nil)
        // …and takes the shard over once the claim expired, under a higher fence and a new run.
        w.clock.advance(1001)
        let second = try #require(try w.claim("o2"))
        #expect(second.index == 0 && second.fence > first.fence && second.run == 2 && second.owner == "o2")
        // The old claim can no longer renew, mark, commit or finish.
        #expect(try w.store.renewShard(id: "b", index: 0, fence: first.fence, ttlMs: 1000) == false)
        let batch = OutcomeBatch(app: "a", job: w.job(first, checkpoint: w.tokens[0].hex), outcomes: [w.outcome(w.tokens[0], .accepted)])
        for attempt in [
            { _ = try w.store.commit(batch) },
            { try w.store.markDispatched(id: "b", index: 0, fence: first.fence, pass: .main, run: 1, through: w.tokens[3].hex) },
            { _ = try w.store.finishShard(id: "b", index: 0, fence: first.fence, end: .finished) },
        ] as [() throws -> Void] {
            #expect { try attempt() } throws: { ($0 as? DeliveryStoreError)?.code == .leaseLost }
        }
        let shard = try #require(try w.store.shards(id: "b").first)
        #expect(shard.checkpoint == "" && shard.dispatched == "" && shard.state == .claimed && shard.owner == "o2")
        #expect(try w.store.counts(id: "b").done == 0)
        #expect(try w.store.broadcast(id: "b")?.state == .running)
        // The new owner finishes it: the last shard completes the broadcast.
        #expect(try w.store.finishShard(id: "b", index: 0, fence: second.fence, end: .finished) == .completed)
        #expect(try w.claim("o3") == nil)
    }

    /// A broadcast to one environment is cut among that environment's devices only: the other environment's tokens,
    /// interleaved with them in key order, count toward no shard.
    @Test(arguments: Backend.allCases) func anEnvironmentsBroadcastIsCutAmongItsOwnDevices(_ backend: Backend) throws {
        let w = try World(backend, devices: 0)
        let tokens = (0..<30).map { testToken(100 + $0) }.sorted()
        let requests = tokens.enumerated().map { i, token in
            RegistrationRequest(app: "a", token: token, environment: i % 2 == 0 ? .development : .production)
        }
        let (sizes, seen) = try w.cutBroadcast(requests, BroadcastRecord(
            id: "dev", app: "a", payload: Array(#"{"aps":{"alert":"x"}}"#.utf8), pushType: .alert, priority: .immediate,
            environment: .development), total: 15)
        #expect(sizes == [5, 5, 5])
        #expect(seen == tokens.enumerated().filter { $0.offset % 2 == 0 }.map(\.element))
    }

    /// A channel's broadcast is cut among the channel's devices: the app's other devices count toward no shard.
    @Test(arguments: Backend.allCases) func aChannelsBroadcastIsCutAmongItsOwnDevices(_ backend: Backend) throws {
        let w = try World(backend, devices: 0)
        let tokens = (0..<30).map { testToken(200 + $0) }.sorted()
        let requests = tokens.enumerated().map { i, token in
            RegistrationRequest(app: "a", token: token, channels: i % 3 == 0 ? ["sports"] : ["news"], environment: .production)
        }
        let (sizes, seen) = try w.cutBroadcast(requests, BroadcastRecord(
            id: "news", app: "a", payload: Array(#"{"aps":{"alert":"x"}}"#.utf8), pushType: .alert, priority: .immediate,
            channel: "news"), total: 20)
        #expect(sizes == [5, 5, 5, 5])
        #expect(seen == tokens.enumerated().filter { $0.offset % 3 != 0 }.map(\.element))
    }

    @Test(arguments: Backend.allCases) func shardsSplitTheKeySpaceAndEachIsClaimedByOneWorker(_ backend: Backend) throws {
        let w = try World(backend, devices: 50, shardSize: 10)
        let record = try #require(try w.store.broadcast(id: "b"))
        #expect(record.total == 50 && record.state == .running && record.run == 1)
        let shards = try w.store.shards(id: "b")
        #expect(shards.count == 5 && shards.allSatisfy { $0.state == .pending })
        #expect(shards.first?.lo == "" && shards.last?.hi == BroadcastShard.keySpaceEnd)
        #expect(zip(shards, shards.dropFirst()).allSatisfy { $0.hi == $1.lo && $0.hi < $1.hi })
        // Five workers claim five different shards; a sixth finds none.
        var claimed: [BroadcastShard] = []
        for n in 1...5 { claimed.append(try #require(try w.claim("o\(n)"))) }
        #expect(Set(claimed.map(\.index)) == Set(0..<5))
        #expect(try w.claim("o6") == nil)
        // Their targets partition the devices: every device in exactly one shard.
        var seen: [DeviceToken] = []
        var sizes: [Int] = []
        for shard in claimed.sorted(by: { $0.index < $1.index }) {
            let targets = try w.store.targets(of: record, after: shard.lo, through: shard.hi, limit: 1000).map(\.token)
            seen += targets
            sizes.append(targets.count)
        }
        #expect(seen == w.tokens)
        // Cut every shardSize-th token: shards of equal size.
        #expect(sizes == [10, 10, 10, 10, 10])
        // Finishing all but one leaves the broadcast running; the last completes it.
        for shard in claimed.dropLast() {
            #expect(try w.store.finishShard(id: "b", index: shard.index, fence: shard.fence, end: .finished) == .running)
        }
        let last = try #require(claimed.last)
        #expect(try w.store.finishShard(id: "b", index: last.index, fence: last.fence, end: .finished) == .completed)
    }

    @Test(arguments: Backend.allCases) func aCommitWritesRowsPrunesCountsAndCheckpointTogetherAndAcceptedDevicesLeaveNoRow(_ backend: Backend) throws {
        let w = try World(backend)
        let record = try #require(try w.store.broadcast(id: "b"))
        #expect(record.total == 10 && record.run == 1 && record.state == .running)
        let shard = try #require(try w.claim())
        let t = w.tokens
        var batch = OutcomeBatch(
            app: "a", job: w.job(shard, checkpoint: t[3].hex, accepted: 2, duplicated: 1),
            outcomes: [
                w.outcome(t[0], .accepted), w.outcome(t[1], .tokenDead, prune: PruneRequest(reason: .unregistered)),
                w.outcome(t[2], .deferred), w.outcome(t[3], .accepted, duplicated: true), w.outcome(t[4], .pending),
            ])
        batch.deliveryLog = .all
        let receipt = try w.store.commit(batch)
        #expect(receipt.pruned == [t[1]])
        let counts = try w.store.counts(id: "b")
        #expect(counts.done == 4)  // the pending marker is not an outcome
        #expect(counts.accepted == 2 && counts.deferred == 1 && counts.pruned == 1 && counts.possiblyDuplicated == 1)
        #expect(counts.notAcceptedByReason == ["Unregistered": 1, "deferred": 1])
        #expect(try w.registry.devices("a") == 9)
        #expect(try w.store.shards(id: "b").first?.checkpoint == t[3].hex)
        #expect(try w.registry.recentDeliveries(app: "a", limit: 100).count == 4)  // pending markers are not delivery-log rows
        // Rows only where a device needs action later: the dead token, the deferral, the pending device.
        let stored = try w.store.storedOutcomes(id: "b", after: "", through: t[9].hex)
        #expect(stored.keys.sorted() == [t[1].hex, t[2].hex, t[4].hex].sorted())
        #expect(stored[t[4].hex]?.kind == .pending)
        #expect(stored[t[2].hex] == StoredOutcome(kind: .deferred, possiblyDuplicated: false, run: 1))
        // A prune the breaker released later marks the outcome row pruned, in the store's count.
        let released = try w.store.commit(OutcomeBatch(
            app: "a", job: w.job(shard), outcomes: [w.outcome(t[5], .tokenDead)], releasedPrunes: [t[5]]))
        #expect(released.pruned == [t[5]])
        #expect(try w.store.counts(id: "b").pruned == 2)
        // …and one released for a row of an earlier commit too.
        let dead = w.outcome(t[6], .tokenDead)
        _ = try w.store.commit(OutcomeBatch(app: "a", job: w.job(shard), outcomes: [dead]))
        #expect(try w.store.counts(id: "b").pruned == 2)
        _ = try w.store.commit(OutcomeBatch(app: "a", job: w.job(shard), outcomes: [], releasedPrunes: [t[6]]))
        #expect(try w.store.counts(id: "b").pruned == 3)
        // The worker is credited with what it settled (pending markers aside).
        #expect(try w.store.workers(id: "b") == ["o1": 6])
        // Completing sets total to the devices with an outcome.
        #expect(try w.store.finishShard(id: "b", index: shard.index, fence: shard.fence, end: .finished) == .completed)
        let done = try #require(try w.store.broadcast(id: "b"))
        #expect(done.state == .completed && done.total == 6 && done.finishedMs != nil)
    }

    @Test(arguments: Backend.allCases) func anAnswerReplacesOrRemovesTheRowItsDeviceHadAndItCountsOnce(_ backend: Backend) throws {
        let w = try World(backend)
        let t = w.tokens
        let first = try #require(try w.claim("o1", ttlMs: 1000))
        // Claim 1 leaves: a pending device (held while it waited, then the claim died), and three deferrals.
        _ = try w.store.commit(OutcomeBatch(app: "a", job: w.job(first), outcomes: [
            w.outcome(t[0], .pending, duplicated: true), w.outcome(t[1], .deferred, attempts: 5),
            w.outcome(t[2], .deferred), w.outcome(t[3], .deferred),
        ]))
        #expect(try w.store.counts(id: "b").done == 3 && w.store.counts(id: "b").deferred == 3)
        w.clock.advance(1001)
        let second = try #require(try w.claim("o2"))
        let targets = try w.store.deferredTargets(id: "b", beforeRun: second.run, after: "", through: second.hi, limit: 10)
        #expect(targets.map(\.target.token) == [t[0], t[1], t[2], t[3]])
        #expect(targets.map(\.previous.kind) == [.pending, .deferred, .deferred, .deferred])
        #expect(targets.first?.previous.possiblyDuplicated == true)
        // Claim 2's answers: the pending one accepted (its row goes, it counts once), one deferral accepted, one
        // rejected, one deferred again.
        _ = try w.store.commit(OutcomeBatch(app: "a", job: w.job(second, accepted: 2), outcomes: [
            w.outcome(t[0], .accepted, mayHaveRow: true), w.outcome(t[1], .accepted, mayHaveRow: true),
            w.outcome(t[2], .rejected, mayHaveRow: true), w.outcome(t[3], .deferred, mayHaveRow: true),
        ]))
        let counts = try w.store.counts(id: "b")
        #expect(counts.done == 4 && counts.accepted == 2 && counts.deferred == 1 && counts.notAccepted == 2)
        #expect(counts.notAcceptedByReason == ["BadTopic": 1, "deferred": 1])
        #expect(counts.retried == 0)  // the deferral that took five attempts is no longer counted as such
        let stored = try w.store.storedOutcomes(id: "b", after: "", through: BroadcastShard.keySpaceEnd)
        #expect(stored.keys.sorted() == [t[2].hex, t[3].hex].sorted())
        #expect(stored[t[3].hex]?.run == second.run)
        // Nothing is left for claim 2 itself to retry; a later claim would retry the one deferred again.
        #expect(try w.store.deferredTargets(id: "b", beforeRun: second.run, after: "", through: second.hi, limit: 10).isEmpty)
        #expect(try w.store.deferredTargets(id: "b", beforeRun: second.run + 1, after: "", through: second.hi, limit: 10)
            .map(\.target.token) == [t[3]])
        #expect(try w.store.workers(id: "b") == ["o1": 3, "o2": 4])
    }

    /// The upgrade to the lean ledger (SQLite schema 12, PostgreSQL 9): a broadcast the old engine left unfinished —
    /// a row for every device with an outcome, accepted ones included, some past the checkpoint — is counted from
    /// its rows, and resumes from them: the accepted rows past the checkpoint still keep those devices from being
    /// sent again, the pending and deferred ones are the next claim's to send, and the counts end exact.
    @Test(arguments: Backend.allCases) func anUnfinishedBroadcastOfTheOldLedgerIsCountedAndResumesAcrossTheUpgrade(_ backend: Backend) throws {
        let w = try World(backend)
        let t = w.tokens.map(\.hex)
        let old = try #require(try w.claim("old", ttlMs: 1000))
        let (sqlTrue, sqlFalse) = backend == .sqlite ? ("1", "0") : ("true", "false")
        func row(_ token: String, _ kind: String, _ status: Int, _ reason: String?, attempts: Int = 1, pruned: Bool = false, dup: Bool = false) -> String {
            "('b', '\(token)', '\(kind)', \(status), \(reason.map { "'\($0)'" } ?? "NULL"), \(attempts), \(pruned ? sqlTrue : sqlFalse), \(dup ? sqlTrue : sqlFalse), 1)"
        }
        // The schema before the lean ledger (SQLite 11, PostgreSQL 8): the later migrations' tables and columns go too.
        let version = backend == .sqlite ? 11 : 8
        try w.registry.executeRaw("""
            INSERT INTO broadcast_outcomes (broadcast_id, token, kind, status, reason, attempts, pruned, possibly_duplicated, run) VALUES
                \(row(t[0], "accepted", 200, nil)), \(row(t[1], "accepted", 200, nil, attempts: 2)), \(row(t[2], "tokenDead", 410, "Unregistered", pruned: true)),
                \(row(t[3], "accepted", 200, nil)), \(row(t[4], "deferred", 429, "TooManyRequests", attempts: 5)), \(row(t[5], "accepted", 200, nil, dup: true)),
                \(row(t[6], "pending", 0, "APNs unreachable", attempts: 0, dup: true));
            UPDATE broadcast_shards SET checkpoint = '\(t[4])', dispatched = '\(t[7])' WHERE broadcast_id = 'b';
            DROP TABLE broadcast_counts;
            DROP TABLE broadcast_rates;
            DROP INDEX broadcast_outcomes_retry;
            CREATE INDEX broadcast_outcomes_deferred ON broadcast_outcomes (broadcast_id, token) WHERE kind = 'deferred';
            UPDATE schema_version SET version = \(version)
            """)
        let end = ShardEnd.released(error: "APNs unreachable", retryAfterMs: 0, mainDone: false, settledDispatched: nil)
        #expect(try w.store.finishShard(id: "b", index: 0, fence: old.fence, end: end) == .interrupted)
        // The installations and push-services migrations' columns and indexes go too (after the claim above, which reads them).
        try w.registry.executeRaw("""
            DROP INDEX devices_user;
            DROP INDEX devices_installation;
            \(["installation", "user_id", "time_zone", "locale", "app_version", "app_version_key", "os_version", "os_version_key", "tags",
               "tz_history", "tz_changed_ms", "service", "subscription"].map { "ALTER TABLE devices DROP COLUMN \($0);" }.joined(separator: "\n"))
            ALTER TABLE broadcasts DROP COLUMN targeting;
            ALTER TABLE delivery_log DROP COLUMN service;
            ALTER TABLE webhook_events DROP COLUMN service;
            \(backend.countersWithoutServices)
            """)

        // Opened by the new version: migrated, and counted from its rows.
        let upgraded = try backend.reopen(w.registry)
        let store = upgraded.deliveryStore
        let counts = try store.counts(id: "b")
        #expect(counts.done == 6 && counts.accepted == 4 && counts.deferred == 1 && counts.pruned == 1)
        #expect(counts.retried == 2 && counts.possiblyDuplicated == 1)
        #expect(counts.notAcceptedByReason == ["Unregistered": 1, "TooManyRequests": 1])

        // Resumed: the main pass starts after the checkpoint and skips the accepted row past it; the pending and
        // deferred devices are the retry pass's.
        _ = try store.startBroadcast(id: "b", shardSize: 1000, newRound: true)
        let shard = try #require(try store.claimShard(broadcastId: "b", apps: nil, owner: "new", ttlMs: 30_000, ownerIsDead: { _ in false }))
        #expect(shard.run == 2 && shard.checkpoint == t[4] && shard.dispatched == t[7])
        let stored = try store.storedOutcomes(id: "b", after: shard.checkpoint, through: shard.hi)
        #expect(stored[t[5]]?.kind == .accepted && stored[t[6]]?.kind == .pending)
        #expect(try store.deferredTargets(id: "b", beforeRun: shard.run, after: "", through: shard.hi, limit: 10)
            .map(\.target.token.hex) == [t[4], t[6]])
        // What the engine then commits: t6 (its pending row) and t7–t9 accepted in the main pass, t4 in the retry pass.
        let main = OutcomeBatch(
            app: "a", job: .init(id: "b", shard: 0, fence: shard.fence, run: shard.run, checkpoint: BroadcastShard.keySpaceEnd,
                                 accepted: AcceptedTally(count: 4, retried: 0, possiblyDuplicated: 2)),
            outcomes: [w.outcome(w.tokens[6], .accepted, duplicated: true, mayHaveRow: true)]
                + (7...9).map { w.outcome(w.tokens[$0], .accepted, duplicated: $0 == 7) })
        _ = try store.commit(main)
        _ = try store.commit(OutcomeBatch(
            app: "a", job: .init(id: "b", shard: 0, fence: shard.fence, run: shard.run, accepted: AcceptedTally(count: 1, retried: 1, possiblyDuplicated: 0)),
            outcomes: [w.outcome(w.tokens[4], .accepted, mayHaveRow: true, attempts: 2)]))
        #expect(try store.finishShard(id: "b", index: 0, fence: shard.fence, end: .finished) == .completed)
        let final = try store.counts(id: "b")
        #expect(final.done == 10 && final.accepted == 9 && final.deferred == 0 && final.notAccepted == 1)
        #expect(try store.broadcast(id: "b")?.total == 10)
    }

    @Test(arguments: Backend.allCases) func anAcceptedDeviceIsCountedOnlyThroughTheEnginesTally(_ backend: Backend) throws {
        let w = try World(backend)
        let t = w.tokens
        let shard = try #require(try w.claim())
        // Answered but not yet passed by the checkpoint: not counted, no row.
        _ = try w.store.commit(OutcomeBatch(app: "a", job: w.job(shard), outcomes: [w.outcome(t[1], .accepted)]))
        #expect(try w.store.counts(id: "b").done == 0)
        #expect(try w.store.storedOutcomes(id: "b", after: "", through: BroadcastShard.keySpaceEnd).isEmpty)
        // The commit whose checkpoint passes it counts it.
        _ = try w.store.commit(OutcomeBatch(app: "a", job: w.job(shard, checkpoint: t[1].hex, accepted: 2),
                                            outcomes: [w.outcome(t[0], .accepted)]))
        #expect(try w.store.counts(id: "b").accepted == 2)
        #expect(try w.store.shards(id: "b").first?.checkpoint == t[1].hex)
    }

    @Test(arguments: Backend.allCases) func deferredDevicesAreTheNextClaimsTargetsAndOnlyTheirs(_ backend: Backend) throws {
        let w = try World(backend)
        let t = w.tokens
        let first = try #require(try w.claim())
        _ = try w.store.commit(OutcomeBatch(
            app: "a", job: w.job(first, accepted: 1),
            outcomes: [w.outcome(t[1], .deferred), w.outcome(t[2], .accepted), w.outcome(t[6], .deferred, duplicated: true)]))
        #expect(try w.store.deferredTargets(id: "b", beforeRun: first.run, after: "", through: first.hi, limit: 10).isEmpty)
        #expect(try w.store.finishShard(id: "b", index: 0, fence: first.fence, end: .finished) == .completed)
        // A completed broadcast stays so for workers; started again, a new round reopens its shards.
        #expect(try w.claim() == nil)
        let round = try w.store.startBroadcast(id: "b", shardSize: 1000, newRound: true)
        #expect(round.run == 2 && round.state == .running)
        let next = try #require(try w.claim())
        #expect(next.run == 2 && next.mainDone)
        let page = try w.store.deferredTargets(id: "b", beforeRun: next.run, after: "", through: next.hi, limit: 1)
        #expect(page.map(\.target.token) == [t[1]])
        let rest = try w.store.deferredTargets(id: "b", beforeRun: next.run, after: t[1].hex, through: next.hi, limit: 10)
        #expect(rest.map(\.target.token) == [t[6]])
        #expect(rest.first?.previous.possiblyDuplicated == true)
        #expect(rest.first?.target.environment == .production)
        // Bounded by the shard's range.
        #expect(try w.store.deferredTargets(id: "b", beforeRun: next.run, after: "", through: t[5].hex, limit: 10).map(\.target.token) == [t[1]])
        // Retried in run 2: no longer a target of run 2's pass.
        _ = try w.store.commit(OutcomeBatch(app: "a", job: w.job(next, accepted: 1), outcomes: [w.outcome(t[1], .accepted, mayHaveRow: true)]))
        #expect(try w.store.counts(id: "b").accepted == 2 && w.store.counts(id: "b").deferred == 1)
        #expect(try w.store.deferredTargets(id: "b", beforeRun: 2, after: "", through: next.hi, limit: 10).map(\.target.token) == [t[6]])
        try w.store.markDispatched(id: "b", index: 0, fence: next.fence, pass: .retry, run: 2, through: t[6].hex)
        let marked = try #require(try w.store.shards(id: "b").first)
        #expect(marked.retryRun == 2 && marked.retryDispatched == t[6].hex)
    }

    @Test(arguments: Backend.allCases) func aShardGivenBackSettlesItsDispatchMarkAndInterruptsTheBroadcastWhenNoWorkerIsLeft(_ backend: Backend) throws {
        let w = try World(backend, devices: 10, shardSize: 5)
        let t = w.tokens
        let (a, b) = (try #require(try w.claim("o1")), try #require(try w.claim("o2")))
        try w.store.markDispatched(id: "b", index: a.index, fence: a.fence, pass: .main, run: a.run, through: t[7].hex)
        try w.store.markDispatched(id: "b", index: a.index, fence: a.fence, pass: .main, run: a.run, through: t[3].hex)
        #expect(try w.store.shards(id: "b")[a.index].dispatched == t[7].hex)
        // Given back while o2 still works: the broadcast stays running.
        let end = ShardEnd.released(error: "interrupted by signal 15", retryAfterMs: 0, mainDone: false, settledDispatched: t[4].hex)
        #expect(try w.store.finishShard(id: "b", index: a.index, fence: a.fence, end: end) == .running)
        let shard = try w.store.shards(id: "b")[a.index]
        #expect(shard.dispatched == t[4].hex && shard.state == .pending && shard.owner == "")
        // Given back after an APNs failure with a retry delay: not claimable before it…
        let again = try #require(try w.claim("o3"))
        #expect(again.index == a.index && again.fence == a.fence + 1)
        let failed = ShardEnd.released(error: "APNs unreachable", retryAfterMs: 30_000, mainDone: false, settledDispatched: nil)
        #expect(try w.store.finishShard(id: "b", index: again.index, fence: again.fence, end: failed) == .running)
        #expect(try w.claim("o4") == nil)
        // …and the last worker leaving makes it interrupted, with the reason.
        #expect(try w.store.finishShard(id: "b", index: b.index, fence: b.fence, end: end) == .interrupted)
        let record = try #require(try w.store.broadcast(id: "b"))
        #expect(record.state == .interrupted && record.error != nil)
        #expect(try w.store.unfinishedBroadcasts().map(\.id) == ["b"])
        // Workers still claim an interrupted broadcast's shards (b's at once, a's after the delay)…
        #expect(try w.claim("o5")?.index == b.index)
        w.clock.advance(30_001)
        #expect(try w.claim("o6")?.index == a.index)
        #expect(try w.store.broadcast(id: "b")?.state == .running)
    }

    @Test(arguments: Backend.allCases) func startingAnInterruptedBroadcastAgainMakesItsShardsClaimableAtOnce(_ backend: Backend) throws {
        let w = try World(backend)
        let shard = try #require(try w.claim())
        let failed = ShardEnd.released(error: "APNs unreachable", retryAfterMs: 60_000, mainDone: false, settledDispatched: nil)
        #expect(try w.store.finishShard(id: "b", index: shard.index, fence: shard.fence, end: failed) == .interrupted)
        #expect(try w.claim() == nil)
        #expect(try w.store.startBroadcast(id: "b", shardSize: 1000, newRound: true).state == .running)
        #expect(try w.claim()?.run == 2)
    }

    @Test(arguments: Backend.allCases) func aClaimOfADeadOwnerIsTakenOverBeforeItExpires(_ backend: Backend) throws {
        let w = try World(backend)
        let first = try #require(try w.claim("host:1:dead"))
        let second = try w.store.claimShard(
            broadcastId: "b", apps: nil, owner: "host:2:alive", ttlMs: 30_000, ownerIsDead: { $0 == "host:1:dead" })
        #expect(second?.index == first.index && second?.fence == first.fence + 1)
        // Only the apps asked for.
        #expect(try w.store.claimShard(broadcastId: nil, apps: ["other"], owner: "x", ttlMs: 1, ownerIsDead: { _ in true }) == nil)
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
        #expect(try w.store.targets(of: record, after: w.tokens[19].hex, through: BroadcastShard.keySpaceEnd, limit: 100).map(\.token)
            == Array(w.tokens[20...]))
        #expect(try w.store.targets(of: record, after: w.tokens[19].hex, through: w.tokens[21].hex, limit: 100).map(\.token)
            == Array(w.tokens[20...21]))
    }

    @Test(arguments: Backend.allCases) func aScheduledJobKeepsItsTimeAndTheStoresClockSaysWhenItIsDue(_ backend: Backend) throws {
        let w = try World(backend)
        var record = BroadcastRecord(
            id: "later", app: "a", payload: Array(#"{"aps":{"alert":"y"}}"#.utf8), pushType: .alert, priority: .immediate)
        record.scheduledMs = w.clock.now + 60_000
        try w.registry.createBroadcast(record, tokens: [w.tokens[0]])
        let stored = try #require(try w.store.broadcast(id: "later"))
        #expect(stored.scheduledMs == record.scheduledMs && stored.state == .pending)
        #expect(try w.store.unfinishedBroadcasts().map(\.id).contains("later"))
        #expect(stored.isWaiting(atMs: try w.store.clockMs()))
        w.clock.advance(60_000)
        let due = try w.store.clockMs()
        #expect(!stored.isWaiting(atMs: due) && stored.isDue(atMs: due))
        // The same job asks for the same time: another time is another job.
        var other = stored
        other.scheduledMs = nil
        #expect(stored.describesSameJob(as: record.withExplicitTokens()) && !stored.describesSameJob(as: other))
    }

    @Test(arguments: Backend.allCases) func aCancelledJobIsNeverStartedClaimedRenewedOrCompletedAgain(_ backend: Backend) throws {
        let w = try World(backend, devices: 20, shardSize: 10)
        // A pending job that never started.
        try w.registry.createBroadcast(BroadcastRecord(
            id: "p", app: "a", payload: Array(#"{"aps":{"alert":"p"}}"#.utf8), pushType: .alert, priority: .immediate), tokens: nil)
        #expect(try w.registry.cancelBroadcast(id: "p", app: "other") == nil)  // another app's job is not found
        #expect(try w.registry.cancelBroadcast(id: "nope", app: "a") == nil)
        #expect(try w.registry.cancelBroadcast(id: "p", app: "a")?.state == .cancelled)
        #expect(try w.store.startBroadcast(id: "p", shardSize: 10, newRound: true).state == .cancelled)
        #expect(try w.store.shards(id: "p").isEmpty)
        #expect(!(try w.store.unfinishedBroadcasts().map(\.id).contains("p")))
        // A running one with a live claim: the claim cannot renew, nothing else is claimable, and the shard's end
        // does not complete or interrupt it.
        let shard = try #require(try w.claim("o1"))
        let cancelled = try #require(try w.registry.cancelBroadcast(id: "b", app: "a"))
        #expect(cancelled.state == .cancelled && cancelled.finishedMs != nil)
        #expect(try w.store.renewShard(id: "b", index: shard.index, fence: shard.fence, ttlMs: 30_000) == false)
        #expect(try w.claim("o2") == nil)
        #expect(try w.store.finishShard(id: "b", index: shard.index, fence: shard.fence, end: .finished) == .cancelled)
        try w.store.noteStopped(id: "b", error: "credentials")
        #expect(try w.store.startBroadcast(id: "b", shardSize: 10, newRound: true).state == .cancelled)
        #expect(try w.store.broadcast(id: "b")?.state == .cancelled)
        // Cancelling again changes nothing.
        #expect(try w.registry.cancelBroadcast(id: "b", app: "a")?.state == .cancelled)
    }

    @Test(arguments: Backend.allCases) func aRunStoppedHoldingNoShardIsInterruptedUnlessAnotherClaimIsLive(_ backend: Backend) throws {
        let w = try World(backend, devices: 30, shardSize: 10)
        // A run finishes its shard, then is stopped before claiming the next: nothing runs, so it is interrupted.
        let first = try #require(try w.claim("o1"))
        #expect(try w.store.finishShard(id: "b", index: first.index, fence: first.fence, end: .finished) == .running)
        try w.store.noteStopped(id: "b", error: "interrupted by signal 15")
        let stopped = try #require(try w.store.broadcast(id: "b"))
        #expect(stopped.state == .interrupted && stopped.error == "interrupted by signal 15")
        // Resumed; while another worker's claim is live, a stop elsewhere leaves it running.
        #expect(try w.store.startBroadcast(id: "b", shardSize: 10, newRound: false).state == .running)
        let other = try #require(try w.claim("o2", ttlMs: 1_000))
        try w.store.noteStopped(id: "b", error: "interrupted by signal 2")
        #expect(try w.store.broadcast(id: "b")?.state == .running)
        // Once that claim has expired (its worker died), a stop says interrupted.
        w.clock.advance(1_001)
        try w.store.noteStopped(id: "b", error: "interrupted by signal 2")
        #expect(try w.store.broadcast(id: "b")?.state == .interrupted)
        // A completed broadcast stays completed.
        #expect(try w.store.startBroadcast(id: "b", shardSize: 10, newRound: false).state == .running)
        while let shard = try w.claim("o3", ttlMs: 30_000) {
            _ = try w.store.finishShard(id: "b", index: shard.index, fence: shard.fence, end: .finished)
        }
        _ = other
        #expect(try w.store.broadcast(id: "b")?.state == .completed)
        try w.store.noteStopped(id: "b", error: "late")
        #expect(try w.store.broadcast(id: "b")?.state == .completed)
    }

    @Test(arguments: Backend.allCases) func aCompletedJobIsNotCancelled(_ backend: Backend) throws {
        let w = try World(backend)
        let shard = try #require(try w.claim())
        #expect(try w.store.finishShard(id: "b", index: shard.index, fence: shard.fence, end: .finished) == .completed)
        let after = try #require(try w.registry.cancelBroadcast(id: "b", app: "a"))
        #expect(after.state == .completed)
        #expect(try w.store.broadcast(id: "b")?.state == .completed)
    }

    @Test(arguments: Backend.allCases) func webhookEventsAreWrittenWithTheirCommitAndLeasedToOneClaimerAtATime(_ backend: Backend) throws {
        let w = try World(backend)
        let shard = try #require(try w.claim())
        let t = w.tokens
        var rejected = w.outcome(t[2], .rejected)
        rejected.status = 400
        rejected.reason = "TopicDisallowed"
        // Without a webhook nothing goes to the outbox…
        _ = try w.store.commit(OutcomeBatch(app: "a", job: w.job(shard), outcomes: [rejected]))
        #expect(try w.store.webhookBacklog(app: "a") == 0)
        // …with one, a pruned token and a final failure make one event each; accepted devices make none.
        var batch = OutcomeBatch(app: "a", job: w.job(shard), outcomes: [
            w.outcome(t[0], .accepted),
            w.outcome(t[1], .tokenDead, prune: PruneRequest(reason: .unregistered, apnsTimestampMs: w.clock.now + 1000)),
            rejected,
        ])
        batch.recordEvents = true
        #expect(try w.store.commit(batch).pruned == [t[1]])
        #expect(try w.store.webhookBacklog(app: "a") == 2)
        // A commit fenced out writes no events either.
        w.clock.advance(60_000)
        let other = try #require(try w.claim("o2"))
        #expect(other.fence > shard.fence)
        #expect(throws: DeliveryStoreError.self) { _ = try w.store.commit(batch) }
        #expect(try w.store.webhookBacklog(app: "a") == 2)
        // One claimer holds them until its lease ends.
        let claimed = try w.store.claimWebhookEvents(app: "a", limit: 10, leaseMs: 5000)
        #expect(claimed.map(\.kind) == [.tokenPruned, .deliveryFailed])
        #expect(claimed[0].token == t[1].hex && claimed[0].reason == "Unregistered" && claimed[0].apnsTimestampMs == w.clock.now - 59_000)
        #expect(claimed[0].broadcastId == "b" && claimed[1].reason == "TopicDisallowed" && claimed[1].status == 400)
        #expect(claimed[0].id < claimed[1].id && claimed.allSatisfy { $0.attempts == 0 })
        #expect(try w.store.claimWebhookEvents(app: "a", limit: 10, leaseMs: 5000).isEmpty)
        // A failed post makes them due again after the backoff, with the attempt counted.
        try w.store.retryWebhookEvents(ids: claimed.map(\.id), afterMs: 2000)
        w.clock.advance(1999)
        #expect(try w.store.claimWebhookEvents(app: "a", limit: 10, leaseMs: 5000).isEmpty)
        w.clock.advance(1)
        let again = try w.store.claimWebhookEvents(app: "a", limit: 1, leaseMs: 5000)
        #expect(again.map(\.id) == [claimed[0].id] && again[0].attempts == 1)
        // Delivered events are gone; the other one is still due.
        try w.store.deleteWebhookEvents(ids: again.map(\.id))
        #expect(try w.store.webhookBacklog(app: "a") == 1)
        #expect(try w.store.claimWebhookEvents(app: "a", limit: 10, leaseMs: 5000).map(\.id) == [claimed[1].id])
        #expect(try w.store.webhookBacklog(app: "other") == 0)
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

extension BroadcastRecord {
    /// The record as stored for an explicit token list.
    fileprivate func withExplicitTokens() -> BroadcastRecord {
        var copy = self
        copy.explicitTokens = true
        return copy
    }
}

extension RegistryStore {
    /// Runs raw SQL statements (separated by `;` at line ends) on the registry's database, in one transaction (to
    /// set up what an older version left behind).
    func executeRaw(_ sql: String) throws {
        switch self {
        case let sqlite as SQLiteRegistry: try sqlite.writer.withLock { (db) throws(StoreError) in try db.execute(sql) }
        case let postgres as PostgresRegistry:
            try postgres.pool.transaction { (db) throws(StoreError) in
                for statement in sql.components(separatedBy: ";\n") { try db.execute(statement) }
            }
        default: throw StoreError(.invalidInput, "unknown backend \(type(of: self))")
        }
    }
}
