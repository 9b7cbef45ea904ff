import Foundation
import PushCore
import Testing

@testable import PushStore
import TestSupport

/// The registry contract (``RegistryStore``) on both backends: registration and replacement, NSData tokens,
/// apps kept apart, gated prunes and their log, group commits, keyset streaming with channel and environment
/// filters, imports, the delivery log, broadcasts.
@Suite struct RegistryConformanceTests {
    @Test(arguments: Backend.allCases) func replacementRemovesOldAndKeepsNew(_ backend: Backend) throws {
        let clock = ManualClock()
        let registry = try backend.open(clock: clock)
        let old = testToken(1), new = testToken(2)
        #expect(try registry.add(app: "a", token: old, channels: ["news"]) == .created)
        clock.advance(10)
        #expect(try registry.add(app: "a", token: new, oldToken: old) == .replaced(old))
        let devices = try registry.list(app: "a")
        #expect(devices.map(\.token) == [new])
        #expect(devices[0].channels == ["news"])  // carried over from the old token
        #expect(devices[0].createdMs == clock.now)
        #expect(try registry.devices("a", channel: "news") == 1)
    }

    @Test(arguments: Backend.allCases) func unknownOldTokenJustRegistersNew(_ backend: Backend) throws {
        let clock = ManualClock()
        let registry = try backend.open(clock: clock)
        let other = testToken(9)
        try registry.add(app: "a", token: other)
        #expect(try registry.add(app: "a", token: testToken(2), oldToken: testToken(1)) == .created)
        #expect(try Set(registry.list(app: "a").map(\.token.hex)) == [other.hex, testToken(2).hex])
    }

    @Test(arguments: Backend.allCases) func oldEqualToNewIsIdempotentAndRefreshes(_ backend: Backend) throws {
        let clock = ManualClock()
        let registry = try backend.open(clock: clock)
        let token = testToken(3)
        #expect(try registry.add(app: "a", token: token, oldToken: token) == .created)
        clock.advance(500)
        #expect(try registry.add(app: "a", token: token, oldToken: token) == .updated)
        #expect(try registry.add(app: "a", token: token) == .updated)
        let device = try #require(try registry.list(app: "a").first)
        #expect(try registry.devices("a") == 1)
        #expect(device.lastRegisteredMs == clock.now)
        #expect(device.createdMs == clock.now - 500)
    }

    @Test(arguments: Backend.allCases) func nsDataFormIsStoredCanonically(_ backend: Backend) throws {
        let clock = ManualClock()
        let registry = try backend.open(clock: clock)
        let spaced = try DeviceToken(parsing: "<740f4707 bebcf74f 9b7c25d4 8e335894 5f6aa01d a5ddb387 462c7eaf 61bb78ad>")
        try registry.add(app: "a", token: spaced)
        #expect(try registry.list(app: "a").map(\.token.hex) == ["740f4707bebcf74f9b7c25d48e3358945f6aa01da5ddb387462c7eaf61bb78ad"])
        let upper = try DeviceToken(parsing: "740F4707BEBCF74F9B7C25D48E3358945F6AA01DA5DDB387462C7EAF61BB78AD")
        let new = testToken(4)
        #expect(try registry.add(app: "a", token: new, oldToken: upper) == .replaced(upper))
        #expect(try registry.list(app: "a").map(\.token.hex) == [new.hex])
    }

    @Test(arguments: Backend.allCases) func appsAreSeparate(_ backend: Backend) throws {
        let clock = ManualClock()
        let registry = try backend.open(clock: clock)
        try registry.add(app: "a", token: testToken(1))
        try registry.add(app: "b", token: testToken(2), oldToken: testToken(1))
        #expect(try registry.list(app: "a").map(\.token.hex) == [testToken(1).hex])
        #expect(try registry.list(app: "b").map(\.token.hex) == [testToken(2).hex])
    }

    @Test(arguments: Backend.allCases) func reRegisterAfterPrune(_ backend: Backend) throws {
        let clock = ManualClock()
        let registry = try backend.open(clock: clock)
        let token = testToken(5)
        try registry.add(app: "a", token: token)
        #expect(try registry.prune(app: "a", token: token, PruneRequest(reason: .badDeviceToken, apnsTimestampMs: nil)) == .deleted)
        #expect(try registry.devices("a") == 0)
        #expect(try registry.add(app: "a", token: token) == .created)
        #expect(try registry.list(app: "a").map(\.token.hex) == [token.hex])
    }

    @Test(arguments: Backend.allCases) func gonePruneDeletesOnlyWhenRegisteredBeforeTimestamp(_ backend: Backend) throws {
        let clock = ManualClock()
        let registry = try backend.open(clock: clock)
        let stale = testToken(6), fresh = testToken(7)
        try registry.add(app: "a", token: stale)  // registered at t0
        let t0 = clock.now
        clock.advance(1000)
        try registry.add(app: "a", token: fresh)  // registered at t0 + 1000
        // APNs says both stopped being valid at t0 + 500.
        let ts = t0 + 500
        #expect(try registry.prune(app: "a", token: stale, PruneRequest(reason: .unregistered, apnsTimestampMs: ts)) == .deleted)
        #expect(
            try registry.prune(app: "a", token: fresh, PruneRequest(reason: .expiredToken, apnsTimestampMs: ts))
                == .skippedNewerRegistration)
        #expect(try registry.prune(app: "a", token: stale, PruneRequest(reason: .unregistered, apnsTimestampMs: ts)) == .notFound)
        #expect(try registry.list(app: "a").map(\.token.hex) == [fresh.hex])
        let log = try registry.pruneLog(app: "a", limit: 100)
        #expect(log.count == 2)
        #expect(log[0].token == fresh && log[0].outcome == .skippedNewerRegistration && log[0].reason == APNsReason.expiredToken.rawValue)
        #expect(log[1].token == stale && log[1].outcome == .deleted && log[1].apnsTimestampMs == ts)
        #expect(log[1].lastRegisteredMs == t0 && log[1].atMs == clock.now)
    }

    @Test(arguments: Backend.allCases) func nonPruningReasonIsRejected(_ backend: Backend) throws {
        let clock = ManualClock()
        let registry = try backend.open(clock: clock)
        try registry.add(app: "a", token: testToken(8))
        #expect(throws: StoreError.self) {
            try registry.prune(app: "a", token: testToken(8), PruneRequest(reason: .tooManyRequests, apnsTimestampMs: nil))
        }
        #expect(try registry.devices("a") == 1)
    }

    /// Apple adds reasons: a 410 with one this version does not know prunes like Unregistered (gated on its
    /// timestamp), the log keeps the reason APNs sent, and the counter (a metric label) counts it as `unknown`.
    @Test(arguments: Backend.allCases) func anUnknownReasonWith410PrunesGatedOnItsTimestamp(_ backend: Backend) throws {
        let clock = ManualClock()
        let registry = try backend.open(clock: clock)
        let stale = testToken(11), fresh = testToken(12)
        try registry.add(app: "a", token: stale)
        let ts = clock.now + 500
        clock.advance(1000)
        try registry.add(app: "a", token: fresh)
        let inactive = APNsReason(rawValue: "TokenInactive")
        #expect(try registry.prune(app: "a", token: stale, PruneRequest(reason: inactive, status: 410, apnsTimestampMs: ts)) == .deleted)
        #expect(
            try registry.prune(app: "a", token: fresh, PruneRequest(reason: inactive, status: 410, apnsTimestampMs: ts))
                == .skippedNewerRegistration)
        // The same unknown reason with a 400 says nothing about the token.
        #expect(throws: StoreError.self) {
            try registry.prune(app: "a", token: fresh, PruneRequest(reason: inactive, status: 400, apnsTimestampMs: nil))
        }
        #expect(try registry.list(app: "a").map(\.token.hex) == [fresh.hex])
        #expect(try registry.pruneLog(app: "a", limit: 10).map(\.reason) == [inactive.rawValue, inactive.rawValue])
        #expect(try registry.pruneCounts() == [
            PruneCount(app: "a", service: .apns, reason: APNsReason.unknownLabel, outcome: "deleted", count: 1),
            PruneCount(app: "a", service: .apns, reason: APNsReason.unknownLabel, outcome: "skipped", count: 1),
        ])
    }

    @Test(arguments: Backend.allCases) func batchCommitsValidItemsAndReportsInvalid(_ backend: Backend) throws {
        let clock = ManualClock()
        let registry = try backend.open(clock: clock)
        let requests = [
            RegistrationRequest(app: "a", token: testToken(1)),
            RegistrationRequest(app: "a", token: testToken(2), channels: ["bad channel!"]),
            RegistrationRequest(app: "a", token: testToken(3), oldToken: testToken(1)),
        ]
        let results = registry.registerBatch(requests)
        #expect(results.count == 3)
        #expect((try? results[0].get()) == .created)
        #expect((try? results[2].get()) == .replaced(testToken(1)))
        guard case .failure(let error) = results[1] else { Issue.record("expected failure"); return }
        #expect(error.code == .invalidInput)
        #expect(try registry.list(app: "a").map(\.token.hex) == [testToken(3).hex])
    }

    @Test(arguments: Backend.allCases) func streamIsKeysetOrderedAndFilterable(_ backend: Backend) throws {
        let clock = ManualClock()
        let registry = try backend.open(clock: clock)
        var expected: [String] = []
        for i in 0..<250 {
            let channels = i % 5 == 0 ? ["five"] : []
            try registry.add(app: "a", token: testToken(i), channels: channels,
                                  environment: i % 2 == 0 ? .production : .development)
            expected.append(testToken(i).hex)
        }
        try registry.add(app: "other", token: testToken(1000))
        var seen: [String] = []
        let stream = registry.batches(app: "a", batchSize: 40)
        for batch in stream {
            #expect(batch.count <= 40)
            seen += batch.map(\.token.hex)
        }
        #expect(stream.error == nil)
        #expect(seen == expected.sorted())
        var five: [String] = []
        try registry.forEachBatch(app: "a", channel: "five", batchSize: 7) { five += $0.map(\.token.hex) }
        #expect(five == (0..<50).map { testToken($0 * 5).hex }.sorted())
        #expect(try registry.devices("a", channel: "five") == 50)
        #expect(try registry.devices("a", environment: .development) == 125)
        #expect(try registry.devices("a", channel: "five", environment: .development) == 25)
        let resumed = try registry.list(app: "a", limit: 10, after: try DeviceToken(parsing: seen[99]))
        #expect(resumed.map(\.token.hex) == Array(seen[100..<110]))
    }

    @Test(arguments: Backend.allCases) func importWritesValidBatchesAndRejectsWholeBadBatch(_ backend: Backend) throws {
        let clock = ManualClock()
        let registry = try backend.open(clock: clock)
        var lines = (0..<30).map { testToken($0).hex }
        lines[12] = "not-a-token"
        lines.insert("", at: 5)  // blank lines are skipped but still counted for line numbers
        let report = try registry.importTokens(app: "a", lines: lines, environment: .development, batchSize: 10)
        #expect(report.committedBatches == 2)
        #expect(report.failedBatches == 1)
        #expect(report.invalid == [.init(line: 14, message: report.invalid.first?.message ?? "")])
        #expect(report.imported == 20)
        #expect(report.skippedValidLines == 9)
        #expect(try registry.devices("a") == 20)
        var exported: [String] = []
        try registry.export(app: "a") { exported.append($0) }
        let written = Array(lines.filter { !$0.isEmpty }[0..<10]) + Array(lines.filter { !$0.isEmpty }[20..<30])
        #expect(exported == written.sorted())
    }

    @Test(arguments: Backend.allCases) func theDeliveryLogAndLastSuccessRecordWhatWasSent(_ backend: Backend) throws {
        let registry = try backend.open()
        let token = testToken(1)
        try registry.add(app: "a", token: token)
        let record = DeliveryRecord(
            app: "a", notificationId: "0F3D2A1E-0000-4000-8000-000000000001", token: token, status: 200, attempts: 2,
            possiblyDuplicated: true, firstAttemptMs: 10, finishedMs: 20)
        let failed = DeliveryRecord(
            app: "a", notificationId: "0F3D2A1E-0000-4000-8000-000000000002", uniqueId: "u-2", token: testToken(2), status: 400,
            reason: "BadDeviceToken", attempts: 1, possiblyDuplicated: false, firstAttemptMs: 11, finishedMs: 21)
        try registry.recordDeliveries([record, failed])
        #expect(try registry.recentDeliveries(app: "a", limit: 10) == [failed, record])
        #expect(try registry.recentDeliveries(app: "b", limit: 10).isEmpty)
        #expect(try registry.deliveryCounts() == [
            DeliveryCount(app: "a", service: .apns, status: 200, reason: nil, count: 1, retries: 1),
            DeliveryCount(app: "a", service: .apns, status: 400, reason: "BadDeviceToken", count: 1),
        ])
        // An accepted outcome of a send to listed tokens, committed by the engine, sets the device's last success,
        // never backwards (and is logged under the default scope).
        let store = registry.deliveryStore
        func accepted(at ms: Int64, direct: Bool = true) -> OutcomeBatch {
            var batch = OutcomeBatch(app: "a", outcomes: [
                DeliveryOutcome(token: token, kind: .accepted, notificationId: "x", status: 200, reason: nil, attempts: 1,
                                possiblyDuplicated: false, prune: nil, startedMs: ms - 1, finishedMs: ms)])
            batch.direct = direct
            return batch
        }
        _ = try store.commit(accepted(at: 5000))
        _ = try store.commit(accepted(at: 4000))
        #expect(try registry.device(app: "a", token: token)?.lastSuccessMs == 5000)
        #expect(try registry.recentDeliveries(app: "a", limit: 10).count == 4)
        // One sent to every device (not listed) is neither logged nor the device's last success by default.
        _ = try store.commit(accepted(at: 6000, direct: false))
        #expect(try registry.device(app: "a", token: token)?.lastSuccessMs == 5000)
        #expect(try registry.recentDeliveries(app: "a", limit: 10).count == 4)
    }

    @Test(arguments: Backend.allCases) func countersAddUpWhatCommitsWroteWithBoundedReasons(_ backend: Backend) throws {
        let registry = try backend.open()
        let store = registry.deliveryStore
        let dead = testToken(9)
        try registry.add(app: "a", token: dead)
        func outcome(_ i: Int, _ kind: DeliveryOutcome.Kind, status: Int, reason: String?, attempts: Int = 1,
                     prune: PruneRequest? = nil) -> DeliveryOutcome {
            DeliveryOutcome(token: i == 9 ? dead : testToken(i), kind: kind, notificationId: "id-\(i)", status: status, reason: reason,
                            attempts: attempts, possiblyDuplicated: false, prune: prune, startedMs: 1, finishedMs: 2)
        }
        _ = try store.commit(OutcomeBatch(app: "a", outcomes: [
            outcome(1, .accepted, status: 200, reason: nil, attempts: 3),
            outcome(2, .accepted, status: 200, reason: nil),
            outcome(3, .deferred, status: 0, reason: "TLS with https://h:443 failed: \"quoted\"\nnewline", attempts: 4),
            outcome(4, .deferred, status: 0, reason: "Connection refused to 10.0.0.1:443", attempts: 4),
            outcome(5, .pending, status: 0, reason: nil),
        ]))
        _ = try store.commit(OutcomeBatch(app: "a", outcomes: [
            outcome(9, .tokenDead, status: 410, reason: "Unregistered", prune: PruneRequest(reason: .unregistered, apnsTimestampMs: nil)),
            outcome(6, .accepted, status: 200, reason: nil),
        ]))
        // Transport errors are one series whatever curl said; pending markers are not deliveries.
        #expect(try registry.deliveryCounts() == [
            DeliveryCount(app: "a", service: .apns, status: 0, reason: "transportError", count: 2, retries: 6),
            DeliveryCount(app: "a", service: .apns, status: 200, reason: nil, count: 3, retries: 2),
            DeliveryCount(app: "a", service: .apns, status: 410, reason: "Unregistered", count: 1),
        ])
        #expect(try registry.pruneCounts() == [PruneCount(app: "a", service: .apns, reason: "Unregistered", outcome: "deleted", count: 1)])
        // A second process on the same database adds to the same totals.
        let other = try backend.reopen(registry)
        _ = try other.deliveryStore.commit(OutcomeBatch(app: "a", outcomes: [outcome(7, .accepted, status: 200, reason: nil)]))
        #expect(try registry.deliveryCounts().first { $0.status == 200 }?.count == 4)
    }

    @Test(arguments: Backend.allCases) func aBroadcastIsCreatedOnceAndListedByState(_ backend: Backend) throws {
        let registry = try backend.open()
        let record = BroadcastRecord(
            id: "b1", app: "a", payload: Array(#"{"aps":{"alert":"héllo"}}"#.utf8), pushType: .alert, priority: .immediate,
            expiration: 1_900_000_000, collapseId: "c", channel: "news", environment: .development)
        try registry.createBroadcast(record, tokens: nil)
        #expect { try registry.createBroadcast(record, tokens: nil) } throws: { ($0 as? StoreError)?.code == .constraint }
        let stored = try #require(try registry.broadcast(id: "b1"))
        #expect(stored.describesSameJob(as: record) && stored.state == .pending && stored.createdMs > 0)
        try registry.createBroadcast(
            BroadcastRecord(id: "b2", app: "other", payload: Array("{}".utf8), pushType: .background, priority: .conserve),
            tokens: [testToken(2), testToken(1), testToken(2)])
        #expect(try registry.broadcast(id: "b2")?.explicitTokens == true)
        #expect(try registry.broadcasts(app: nil, states: [.pending]).map(\.id) == ["b1", "b2"])
        #expect(try registry.broadcasts(app: "other", states: [.pending]).map(\.id) == ["b2"])
        #expect(try registry.broadcasts(app: nil, states: [.completed]).isEmpty)
        #expect(try registry.broadcast(id: "nope") == nil)
        let targets = try registry.deliveryStore.targets(of: try #require(try registry.broadcast(id: "b2")), after: "", through: BroadcastShard.keySpaceEnd, limit: 10)
        #expect(targets.map(\.token) == [testToken(1), testToken(2)].sorted())
    }

    @Test(arguments: Backend.allCases) func opening_the_same_database_again_keeps_it_at_the_current_schema(_ backend: Backend) throws {
        let registry = try backend.open()
        try registry.add(app: "a", token: testToken(1))
        let again: any RegistryStore
        switch registry {
        case let sqlite as SQLiteRegistry: again = try SQLiteRegistry(path: sqlite.path)
        case let pg as PostgresRegistry: again = try PostgresRegistry(url: pg.url, password: nil, connections: 1)
        default: Issue.record("unknown backend"); return
        }
        #expect(try again.schemaVersion() == registry.schemaVersion())
        #expect(try again.schemaVersion() >= 1)
        #expect(try again.devices("a") == 1)
    }

    @Test(arguments: Backend.allCases) func concurrentWritersShareOneRegistry(_ backend: Backend) async throws {
        let registry = try backend.open()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    // Overlapping tokens across workers: the same device registered by several at once.
                    for i in 0..<60 { try registry.add(app: "a", token: testToken((worker % 4) * 1000 + i)) }
                }
            }
            group.addTask {
                for _ in 0..<20 { _ = try registry.devices("a") }
            }
            try await group.waitForAll()
        }
        #expect(try registry.devices("a") == 240)
    }
}
