import Foundation
import PushCore
import Testing

@testable import PushStore
import TestSupport

/// The delivery history on both backends: the newest-first keyset query with its filters and opaque cursor,
/// the indexes behind it, and retention — bounded, flat across many daily broadcasts, never touching what an
/// unfinished broadcast needs to resume.
@Suite struct DeliveryHistoryConformanceTests {
    static let dayMs: Int64 = 86_400_000

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
            try register(tokens)
        }

        func register(_ tokens: [DeviceToken]) throws {
            for r in registry.registerBatch(tokens.map { RegistrationRequest(app: "a", token: $0, environment: .production) }) {
                _ = try r.get()
            }
        }

        /// Creates and starts broadcast `id` (to `tokens` only when given) and claims its one shard.
        func start(_ id: String, tokens: [DeviceToken]? = nil) throws -> BroadcastShard {
            var record = BroadcastRecord(
                id: id, app: "a", payload: Array(#"{"aps":{"alert":"x"}}"#.utf8), pushType: .alert, priority: .immediate)
            record.explicitTokens = tokens != nil
            try registry.createBroadcast(record, tokens: tokens)
            _ = try store.startBroadcast(id: id, shardSize: 100_000, newRound: true)
            return try #require(try store.claimShard(broadcastId: id, apps: nil, owner: "o", ttlMs: 3_600_000, ownerIsDead: { _ in false }))
        }

        /// Commits `outcomes` for the claimed shard of broadcast `id`, the engine's write path: its accepted devices
        /// counted in this commit (as when the checkpoint passes them), every outcome logged unless `log` says otherwise.
        func commit(_ id: String, _ shard: BroadcastShard, _ outcomes: [DeliveryOutcome], log: DeliveryLogScope = .all) throws {
            var accepted = AcceptedTally()
            for o in outcomes where o.kind == .accepted { accepted.add(retried: o.attempts > 1, possiblyDuplicated: o.possiblyDuplicated) }
            var batch = OutcomeBatch(
                app: "a", job: .init(id: id, shard: shard.index, fence: shard.fence, run: shard.run, accepted: accepted),
                outcomes: outcomes)
            batch.deliveryLog = log
            _ = try store.commit(batch)
        }

        func finish(_ id: String, _ shard: BroadcastShard) throws -> BroadcastState {
            try store.finishShard(id: id, index: shard.index, fence: shard.fence, end: .finished)
        }

        /// Every history row of app `a` matching `query`'s filters, through the pages.
        func all(_ query: DeliveryQuery = DeliveryQuery(app: "a", limit: 1000)) throws -> [DeliveryRecord] {
            var query = query
            var out: [DeliveryRecord] = []
            while true {
                let page = try registry.deliveries(query)
                out += page.records
                guard let next = page.next else { return out }
                query.after = next
            }
        }
    }

    static func outcome(
        _ token: DeviceToken, _ kind: DeliveryOutcome.Kind, at ms: Int64, id: String = "b", prune: PruneRequest? = nil
    ) -> DeliveryOutcome {
        let status = switch kind {
        case .accepted: 200
        case .tokenDead: 410
        case .rejected: 400
        case .deferred, .pending: 0
        }
        let reason: String? = switch kind {
        case .tokenDead: "Unregistered"
        case .rejected: "BadTopic"
        case .deferred: "ServiceUnavailable"
        default: nil
        }
        return DeliveryOutcome(
            token: token, kind: kind, notificationId: NotificationID.derived(broadcast: id, token: token), status: status, reason: reason,
            attempts: 1, prune: prune, startedMs: ms - 5, finishedMs: ms)
    }

    @Test(arguments: Backend.allCases) func theHistoryPagesNewestFirstWithEveryFilterAndAnOpaqueCursor(_ backend: Backend) throws {
        let w = try World(backend)
        let t = w.tokens
        let shard = try w.start("b")
        try w.commit("b", shard, [
            Self.outcome(t[0], .accepted, at: 1000), Self.outcome(t[1], .tokenDead, at: 2000),
            Self.outcome(t[2], .deferred, at: 3000), Self.outcome(t[3], .accepted, at: 3000),
            Self.outcome(t[4], .pending, at: 3500),
        ])
        // A `pushctl send` row (no broadcast), a row as older versions wrote it (no kind), another app's row.
        try w.registry.recordDeliveries([
            DeliveryRecord(app: "a", notificationId: "send-1", token: t[0], status: 400, reason: "BadTopic", attempts: 1,
                           possiblyDuplicated: false, firstAttemptMs: 3990, finishedMs: 4000, kind: .rejected),
            DeliveryRecord(app: "a", notificationId: "old-1", token: t[0], status: 200, attempts: 1, possiblyDuplicated: false,
                           firstAttemptMs: 490, finishedMs: 500),
            DeliveryRecord(app: "z", notificationId: "other", token: t[5], status: 200, attempts: 1, possiblyDuplicated: false,
                           firstAttemptMs: 4990, finishedMs: 5000, kind: .accepted),
        ])
        let all = try w.all()
        // Newest first; equal times in the order they were written, newest first; the pending marker is not history.
        #expect(all.map(\.notificationId) == ["send-1", NotificationID.derived(broadcast: "b", token: t[3]), NotificationID.derived(broadcast: "b", token: t[2]),
                                      NotificationID.derived(broadcast: "b", token: t[1]), NotificationID.derived(broadcast: "b", token: t[0]), "old-1"])
        #expect(all.map(\.kind) == [.rejected, .accepted, .deferred, .tokenDead, .accepted, .accepted])  // the old row's kind from its status
        #expect(all.map(\.broadcastId) == [nil, "b", "b", "b", "b", nil])
        #expect(all[0].token == t[0] && all[0].reason == "BadTopic" && all[0].status == 400 && all[0].finishedMs == 4000)
        // Pages of two through the opaque cursor give the same rows, and the last page says there is no next.
        var paged: [DeliveryRecord] = []
        var query = DeliveryQuery(app: "a", limit: 2)
        var pages = 0
        while true {
            let page = try w.registry.deliveries(query)
            paged += page.records
            pages += 1
            guard let next = page.next else { break }
            let parsed = try #require(DeliveryCursor(encoded: next.encoded))
            #expect(parsed == next)
            query.after = parsed
        }
        #expect(paged == all && pages == 3)
        // Each filter, alone and together.
        #expect(try w.all(DeliveryQuery(app: "a", token: t[0])).map(\.notificationId)
            == ["send-1", NotificationID.derived(broadcast: "b", token: t[0]), "old-1"])
        #expect(try w.all(DeliveryQuery(app: "a", broadcastId: "b")).count == 4)
        #expect(try w.all(DeliveryQuery(app: "a", broadcastId: "nope")).isEmpty)
        #expect(try w.all(DeliveryQuery(app: "a", sinceMs: 3000)).map(\.finishedMs) == [4000, 3000, 3000])
        #expect(try w.all(DeliveryQuery(app: "a", kind: .deferred)).map(\.token) == [t[2]])
        #expect(try w.all(DeliveryQuery(app: "a", kind: .accepted)).map(\.notificationId)
            == [NotificationID.derived(broadcast: "b", token: t[3]), NotificationID.derived(broadcast: "b", token: t[0]), "old-1"])
        #expect(try w.all(DeliveryQuery(app: "a", token: t[0], broadcastId: "b", sinceMs: 1000, kind: .accepted)).count == 1)
        #expect(try w.all(DeliveryQuery(app: "z")).map(\.notificationId) == ["other"])
    }

    @Test(arguments: Backend.allCases) func aFailuresOnlyLogKeepsNoAcceptedRowOfABroadcastButCountsItAndLogsSendsToListedTokens(_ backend: Backend) throws {
        let w = try World(backend)
        let t = w.tokens
        let shard = try w.start("b")
        try w.commit("b", shard, [
            Self.outcome(t[0], .accepted, at: 1000), Self.outcome(t[1], .tokenDead, at: 2000),
            Self.outcome(t[2], .deferred, at: 3000), Self.outcome(t[3], .accepted, at: 3000),
            Self.outcome(t[4], .rejected, at: 3100), Self.outcome(t[5], .pending, at: 3500),
        ], log: .failures)
        // `pushctl send` batches (no broadcast) under the same scope: to listed tokens, and to every device.
        var direct = OutcomeBatch(app: "a", outcomes: [Self.outcome(t[6], .accepted, at: 4000, id: "s")])
        direct.deliveryLog = .failures
        direct.direct = true
        _ = try w.store.commit(direct)
        var all = OutcomeBatch(app: "a", outcomes: [Self.outcome(t[7], .accepted, at: 4100, id: "s2")])
        all.deliveryLog = .failures
        _ = try w.store.commit(all)

        // The log holds the dead token, the deferral, the rejection and the send to a listed token; no accepted row
        // of the broadcast or of the send to every device, no pending marker.
        #expect(try w.all().map(\.token) == [t[6], t[4], t[2], t[1]])
        #expect(try w.all(DeliveryQuery(app: "a", kind: .accepted)).map(\.token) == [t[6]])
        // Every answered outcome is still counted (the accepted ones too), per status.
        let counts = try w.registry.deliveryCounts().filter { $0.app == "a" }
        #expect(counts.first { $0.status == 200 }?.count == 4)
        #expect(counts.first { $0.status == 410 }?.count == 1)
        // The broadcast's counts hold every outcome; only devices that need action later keep a row.
        let progress = try w.store.counts(id: "b")
        #expect(progress.accepted == 2 && progress.deferred == 1 && progress.done == 5)
        let stored = try w.store.storedOutcomes(id: "b", after: "", through: String(repeating: "f", count: 64))
        #expect(stored.keys.sorted() == [t[1], t[2], t[4], t[5]].map(\.hex).sorted())
        // Last success is the last logged accepted notification: the send to a listed token sets it, a broadcast does not.
        #expect(try w.registry.device(app: "a", token: t[0])?.lastSuccessMs == nil)
        #expect(try w.registry.device(app: "a", token: t[6])?.lastSuccessMs == 4000)
        #expect(try w.registry.device(app: "a", token: t[7])?.lastSuccessMs == nil)
    }

    @Test(arguments: Backend.allCases) func aSendJobToListedTokensLogsItsAcceptedDevicesUnderTheDefaultScope(_ backend: Backend) throws {
        let w = try World(backend)
        let t = w.tokens
        let shard = try w.start("job", tokens: [t[0], t[1]])
        var batch = OutcomeBatch(
            app: "a", job: .init(id: "job", shard: shard.index, fence: shard.fence, run: shard.run,
                                 accepted: AcceptedTally(count: 1, retried: 0, possiblyDuplicated: 0)),
            outcomes: [Self.outcome(t[0], .accepted, at: 1000, id: "job"), Self.outcome(t[1], .rejected, at: 1000, id: "job")])
        batch.direct = true
        _ = try w.store.commit(batch)
        #expect(try w.all(DeliveryQuery(app: "a", broadcastId: "job")).map(\.token) == [t[1], t[0]])
        #expect(try w.registry.device(app: "a", token: t[0])?.lastSuccessMs == 1000)
        #expect(try w.store.counts(id: "job").accepted == 1)
    }

    @Test(arguments: Backend.allCases) func everyHistoryQueryReadsThroughItsIndexInTheIndexsOwnOrder(_ backend: Backend) throws {
        let w = try World(backend)
        let cursor = DeliveryCursor(finishedMs: 5, id: 5)
        let token = w.tokens[0]
        let queries: [(DeliveryQuery, String)] = [
            (DeliveryQuery(app: "a"), "delivery_log_app_finished"),
            (DeliveryQuery(app: "a", after: cursor), "delivery_log_app_finished"),
            (DeliveryQuery(app: "a", sinceMs: 1), "delivery_log_app_finished"),
            (DeliveryQuery(app: "a", kind: .accepted, after: cursor), "delivery_log_app_finished"),
            (DeliveryQuery(app: "a", token: token, after: cursor), "delivery_log_app_token"),
            (DeliveryQuery(app: "a", token: token, sinceMs: 1, kind: .deferred), "delivery_log_app_token"),
            (DeliveryQuery(app: "a", broadcastId: "b", after: cursor), "delivery_log_broadcast"),
            (DeliveryQuery(app: "a", broadcastId: "b", sinceMs: 1), "delivery_log_broadcast"),
        ]
        for (query, index) in queries {
            switch w.registry {
            case let sqlite as SQLiteRegistry:
                let plan = try sqlite.deliveriesPlan(query)
                #expect(plan.contains { $0.contains("INDEX \(index)") }, "\(query): \(plan)")
                #expect(!plan.contains { $0.contains("TEMP B-TREE") || $0.hasPrefix("SCAN") }, "\(query): \(plan)")
            case let postgres as PostgresRegistry:
                let plan = try postgres.deliveriesPlan(query)
                #expect(plan.contains { $0.contains("Index Scan") && $0.contains(index) }, "\(query): \(plan)")
                #expect(!plan.contains { $0.contains("Seq Scan") || $0.contains("Sort  (") }, "\(query): \(plan)")
            default:
                Issue.record("unknown backend \(type(of: w.registry))")
            }
        }
    }

    /// The acceptance of issue #15: 40 simulated days, each a broadcast to every device (with one dead token
    /// pruned and registering again the next day) committed through the engine's write path at that day's time,
    /// then a retention pass of 7 days at that day's "now": the history stops growing once the window is full,
    /// and the SQLite file (checkpointed) stays flat after the warm-up.
    @Test(arguments: Backend.allCases) func theHistoryStaysFlatAcrossManyDailyBroadcasts(_ backend: Backend) throws {
        let devices = 400, days = 40, retentionDays: Int64 = 7
        let w = try World(backend, devices: devices)
        var sizes: [Int: Int64] = [:]
        for day in 0..<days {
            if day > 0 { w.clock.advance(Self.dayMs) }
            let now = w.clock.now
            try w.register(w.tokens)
            let id = "digest-\(day)"
            let shard = try w.start(id)
            let outcomes = w.tokens.enumerated().map { i, token in
                i == day % devices
                    ? Self.outcome(token, .tokenDead, at: now, id: id, prune: PruneRequest(reason: .unregistered))
                    : Self.outcome(token, .accepted, at: now, id: id)
            }
            for start in stride(from: 0, to: outcomes.count, by: 150) {
                try w.commit(id, shard, Array(outcomes[start..<min(start + 150, outcomes.count)]))
            }
            #expect(try w.finish(id, shard) == .completed)
            let report = try w.registry.trimHistory(before: now - retentionDays * Self.dayMs, batchSize: 100)
            #expect(report.cutoffMs == now - retentionDays * Self.dayMs)
            let kept = Int(min(Int64(day), retentionDays)) + 1  // days day-7…day: day-7's rows are exactly at the cutoff
            #expect(try w.all().count == kept * devices, "day \(day)")
            #expect(try w.registry.pruneLog(app: "a", limit: 1000).count == kept, "day \(day)")
            if day > Int(retentionDays) {
                // Only the dead token had a row of its own (an accepted device writes none).
                #expect(report.deliveries == devices && report.prunes == 1 && report.outcomes == 1 && report.broadcasts == 1, "day \(day): \(report)")
                // The trimmed broadcast's record stays, completed, with its total and its counts; its rows are gone.
                let old = try #require(try w.registry.broadcast(id: "digest-\(day - Int(retentionDays) - 1)"))
                #expect(old.state == .completed && old.total == devices)
                let counts = try w.registry.broadcastCounts(id: old.id)
                #expect(counts.done == devices && counts.accepted == devices - 1 && counts.pruned == 1)
                #expect(counts.notAcceptedByReason == ["Unregistered": 1])
                #expect(try w.store.storedOutcomes(id: old.id, after: "", through: BroadcastShard.keySpaceEnd).isEmpty)
                #expect(try w.registry.broadcastCounts(id: "digest-\(day - Int(retentionDays))").done == devices)
            }
            if let sqlite = w.registry as? SQLiteRegistry { sizes[day] = try sqlite.checkpointedFileSize() }
        }
        if backend == .sqlite {
            let warm = try #require(sizes[15]), last = try #require(sizes[days - 1]), first = try #require(sizes[0])
            #expect(warm > first * 3)  // the window really filled the file…
            #expect(last <= warm + warm / 10, "sizes: \(sizes.sorted { $0.key < $1.key }.map(\.value))")  // …and it stayed flat
        }
    }

    @Test(arguments: Backend.allCases) func retentionNeverTrimsWhatAnUnfinishedBroadcastNeedsToResume(_ backend: Backend) throws {
        let w = try World(backend)
        let t = w.tokens
        let now = w.clock.now
        // Interrupted: outcomes committed, its shard given back after an outage.
        let interrupted = try w.start("interrupted")
        try w.commit("interrupted", interrupted, (0..<4).map { Self.outcome(t[$0], .accepted, at: now, id: "interrupted") }
            + [Self.outcome(t[4], .deferred, at: now, id: "interrupted"), Self.outcome(t[5], .pending, at: now, id: "interrupted")])
        let end = ShardEnd.released(error: "APNs unreachable", retryAfterMs: 0, mainDone: false, settledDispatched: nil)
        #expect(try w.store.finishShard(id: "interrupted", index: interrupted.index, fence: interrupted.fence, end: end) == .interrupted)
        // Running: a claim that never ended (its worker may be about to commit more).
        let running = try w.start("running")
        try w.commit("running", running, (0..<3).map { Self.outcome(t[$0], .accepted, at: now, id: "running") })
        // Completed: a send job to an explicit list of tokens.
        let completed = try w.start("completed", tokens: Array(t[0..<6]))
        try w.commit("completed", completed, (0..<6).map { Self.outcome(t[$0], .accepted, at: now, id: "completed") })
        #expect(try w.finish("completed", completed) == .completed)

        w.clock.advance(100 * Self.dayMs)
        let report = try w.registry.trimHistory(before: w.clock.now - 30 * Self.dayMs, batchSize: 2)
        // The completed job's accepted devices had no rows: only its token list goes.
        #expect(report.deliveries == 4 + 1 + 3 + 6 && report.outcomes == 0 && report.jobTokens == 6 && report.broadcasts == 1)
        #expect(try w.all().isEmpty)  // the delivery log is history, whoever wrote it
        // The unfinished broadcasts keep every row (pending markers included), so they resume where they stopped…
        let stored = try w.store.storedOutcomes(id: "interrupted", after: "", through: BroadcastShard.keySpaceEnd)
        #expect(stored.count == 2 && stored[t[5].hex]?.kind == .pending && stored[t[4].hex]?.kind == .deferred)
        #expect(try w.store.counts(id: "interrupted").done == 5)
        #expect(try w.store.counts(id: "running").done == 3)
        // …and a second pass has nothing more to delete.
        #expect(try w.registry.trimHistory(before: w.clock.now - 30 * Self.dayMs, batchSize: 2).total == 0)
        let resumed = try w.store.startBroadcast(id: "interrupted", shardSize: 100_000, newRound: true)
        #expect(resumed.state == .running)
        let claim = try #require(try w.store.claimShard(broadcastId: "interrupted", apps: nil, owner: "o2", ttlMs: 1000, ownerIsDead: { _ in false }))
        #expect(try w.store.targets(of: resumed, after: claim.lo, through: claim.hi, limit: 100).count == 10)
        // The completed job's record stays with its counts; its per-device rows are gone.
        let job = try #require(try w.registry.broadcast(id: "completed"))
        #expect(job.state == .completed && job.total == 6)
        #expect(try w.store.counts(id: "completed").done == 6)
    }

    @Test(arguments: Backend.allCases) func retentionKeepsACompletedBroadcastsDeferredRowsSoItsCountsAndItsNextRoundAgree(_ backend: Backend) throws {
        let w = try World(backend)
        let t = w.tokens
        let now = w.clock.now
        let shard = try w.start("b")
        try w.commit("b", shard, [
            Self.outcome(t[0], .accepted, at: now), Self.outcome(t[1], .deferred, at: now),
            Self.outcome(t[2], .rejected, at: now), Self.outcome(t[3], .deferred, at: now),
        ])
        #expect(try w.finish("b", shard) == .completed)
        w.clock.advance(100 * Self.dayMs)
        let report = try w.registry.trimHistory(before: w.clock.now - 30 * Self.dayMs, batchSize: 1)
        // The rejection was history; the deferrals are still to be sent.
        #expect(report.outcomes == 1)
        let counts = try w.store.counts(id: "b")
        #expect(counts.done == 4 && counts.deferred == 2 && counts.accepted == 1)
        // The next round retries exactly the devices its counters say are deferred.
        _ = try w.store.startBroadcast(id: "b", shardSize: 100_000, newRound: true)
        let next = try #require(try w.store.claimShard(broadcastId: "b", apps: nil, owner: "o2", ttlMs: 1000, ownerIsDead: { _ in false }))
        let retry = try w.store.deferredTargets(id: "b", beforeRun: next.run, after: "", through: next.hi, limit: 100)
        #expect(retry.map(\.target.token) == [t[1], t[3]])
        #expect(retry.count == counts.deferred)
    }
}

extension SQLiteRegistry {
    /// The main file's size after a checkpoint that empties the WAL into it.
    func checkpointedFileSize() throws -> Int64 {
        try writer.withLock { (db) throws(StoreError) in try db.execute("PRAGMA wal_checkpoint(TRUNCATE)") }
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return (attributes[.size] as? NSNumber)?.int64Value ?? 0
    }
}
