import Foundation
import PushCore
import Testing

@testable import PushStore

@Suite struct RegistryTests {
    let clock = ManualClock()
    let registry: Registry
    let directory = makeTempDirectory()

    init() throws {
        registry = try Registry(path: directory + "/nested/dir/registry.sqlite", nowMs: clock.function)
    }

    func tokens(_ app: String = "a") throws -> [String] {
        try registry.list(app: app).map(\.token.hex)
    }

    @Test func replacementRemovesOldAndKeepsNew() throws {
        let old = testToken(1), new = testToken(2)
        #expect(try registry.register(app: "a", token: old, channels: ["news"]) == .created)
        clock.advance(10)
        #expect(try registry.register(app: "a", token: new, oldToken: old) == .replaced(old))
        let devices = try registry.list(app: "a")
        #expect(devices.map(\.token) == [new])
        #expect(devices[0].channels == ["news"])  // carried over from the old token
        #expect(devices[0].createdMs == clock.now)
        #expect(try registry.count(app: "a", channel: "news") == 1)
    }

    @Test func unknownOldTokenJustRegistersNew() throws {
        let other = testToken(9)
        try registry.register(app: "a", token: other)
        #expect(try registry.register(app: "a", token: testToken(2), oldToken: testToken(1)) == .created)
        #expect(try Set(tokens()) == [other.hex, testToken(2).hex])
    }

    @Test func oldEqualToNewIsIdempotentAndRefreshes() throws {
        let token = testToken(3)
        #expect(try registry.register(app: "a", token: token, oldToken: token) == .created)
        clock.advance(500)
        #expect(try registry.register(app: "a", token: token, oldToken: token) == .updated)
        #expect(try registry.register(app: "a", token: token) == .updated)
        let device = try #require(try registry.list(app: "a").first)
        #expect(try registry.count(app: "a") == 1)
        #expect(device.lastRegisteredMs == clock.now)
        #expect(device.createdMs == clock.now - 500)
    }

    @Test func nsDataFormIsStoredCanonically() throws {
        let spaced = try DeviceToken(parsing: "<740f4707 bebcf74f 9b7c25d4 8e335894 5f6aa01d a5ddb387 462c7eaf 61bb78ad>")
        try registry.register(app: "a", token: spaced)
        #expect(try tokens() == ["740f4707bebcf74f9b7c25d48e3358945f6aa01da5ddb387462c7eaf61bb78ad"])
        let upper = try DeviceToken(parsing: "740F4707BEBCF74F9B7C25D48E3358945F6AA01DA5DDB387462C7EAF61BB78AD")
        let new = testToken(4)
        #expect(try registry.register(app: "a", token: new, oldToken: upper) == .replaced(upper))
        #expect(try tokens() == [new.hex])
    }

    @Test func appsAreSeparate() throws {
        try registry.register(app: "a", token: testToken(1))
        try registry.register(app: "b", token: testToken(2), oldToken: testToken(1))
        #expect(try tokens("a") == [testToken(1).hex])
        #expect(try tokens("b") == [testToken(2).hex])
    }

    @Test func reRegisterAfterPrune() throws {
        let token = testToken(5)
        try registry.register(app: "a", token: token)
        #expect(try registry.prune(app: "a", token: token, reason: .badDeviceToken, apnsTimestampMs: nil) == .deleted)
        #expect(try registry.count(app: "a") == 0)
        #expect(try registry.register(app: "a", token: token) == .created)
        #expect(try tokens() == [token.hex])
    }

    @Test func gonePruneDeletesOnlyWhenRegisteredBeforeTimestamp() throws {
        let stale = testToken(6), fresh = testToken(7)
        try registry.register(app: "a", token: stale)  // registered at t0
        let t0 = clock.now
        clock.advance(1000)
        try registry.register(app: "a", token: fresh)  // registered at t0 + 1000
        // APNs says both stopped being valid at t0 + 500.
        let ts = t0 + 500
        #expect(try registry.prune(app: "a", token: stale, reason: .unregistered, apnsTimestampMs: ts) == .deleted)
        #expect(
            try registry.prune(app: "a", token: fresh, reason: .expiredToken, apnsTimestampMs: ts)
                == .skippedNewerRegistration)
        #expect(try registry.prune(app: "a", token: stale, reason: .unregistered, apnsTimestampMs: ts) == .notFound)
        #expect(try tokens() == [fresh.hex])
        let log = try registry.pruneLog(app: "a")
        #expect(log.count == 2)
        #expect(log[0].token == fresh && log[0].outcome == .skippedNewerRegistration && log[0].reason == .expiredToken)
        #expect(log[1].token == stale && log[1].outcome == .deleted && log[1].apnsTimestampMs == ts)
        #expect(log[1].lastRegisteredMs == t0 && log[1].atMs == clock.now)
    }

    @Test func nonPruningReasonIsRejected() throws {
        try registry.register(app: "a", token: testToken(8))
        #expect(throws: StoreError.self) {
            try registry.prune(app: "a", token: testToken(8), reason: .tooManyRequests, apnsTimestampMs: nil)
        }
        #expect(try registry.count(app: "a") == 1)
    }

    @Test func batchCommitsValidItemsAndReportsInvalid() throws {
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
        #expect(try tokens() == [testToken(3).hex])
    }

    @Test func streamIsKeysetOrderedAndFilterable() throws {
        var expected: [String] = []
        for i in 0..<250 {
            let channels = i % 5 == 0 ? ["five"] : []
            try registry.register(app: "a", token: testToken(i), channels: channels,
                                  environment: i % 2 == 0 ? .production : .development)
            expected.append(testToken(i).hex)
        }
        try registry.register(app: "other", token: testToken(1000))
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
        #expect(try registry.count(app: "a", channel: "five") == 50)
        #expect(try registry.count(app: "a", environment: .development) == 125)
        #expect(try registry.count(app: "a", channel: "five", environment: .development) == 25)
        let resumed = try registry.list(app: "a", limit: 10, after: try DeviceToken(parsing: seen[99]))
        #expect(resumed.map(\.token.hex) == Array(seen[100..<110]))
    }

    @Test func importWritesValidBatchesAndRejectsWholeBadBatch() throws {
        var lines = (0..<30).map { testToken($0).hex }
        lines[12] = "not-a-token"
        lines.insert("", at: 5)  // blank lines are skipped but still counted for line numbers
        let report = try registry.importTokens(app: "a", lines: lines, environment: .development, batchSize: 10)
        #expect(report.committedBatches == 2)
        #expect(report.failedBatches == 1)
        #expect(report.invalid == [.init(line: 14, message: report.invalid.first?.message ?? "")])
        #expect(report.imported == 20)
        #expect(report.skippedValidLines == 9)
        #expect(try registry.count(app: "a") == 20)
        var exported: [String] = []
        try registry.export(app: "a") { exported.append($0) }
        let written = Array(lines.filter { !$0.isEmpty }[0..<10]) + Array(lines.filter { !$0.isEmpty }[20..<30])
        #expect(exported == written.sorted())
    }

    @Test func deliveriesAndLastSuccess() throws {
        let token = testToken(1)
        try registry.register(app: "a", token: token)
        let record = DeliveryRecord(
            app: "a", apnsId: "0F3D2A1E-0000-4000-8000-000000000001", token: token, status: 200, attempts: 2,
            possiblyDuplicated: true, firstAttemptMs: 10, finishedMs: 20)
        try registry.recordDeliveries([record])
        #expect(try registry.recentDeliveries(app: "a") == [record])
        try registry.markSuccess(app: "a", tokens: [token, testToken(2)], atMs: 5000)
        try registry.markSuccess(app: "a", tokens: [token], atMs: 4000)  // never moves backwards
        #expect(try registry.list(app: "a").first?.lastSuccessMs == 5000)
    }

    @Test func concurrentTasksShareOneRegistry() async throws {
        let registry = self.registry
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for i in 0..<100 { try registry.register(app: "a", token: testToken(worker * 1000 + i)) }
                }
            }
            group.addTask {
                for _ in 0..<20 { _ = try registry.count(app: "a") }
            }
            try await group.waitForAll()
        }
        #expect(try registry.count(app: "a") == 800)
    }
}
