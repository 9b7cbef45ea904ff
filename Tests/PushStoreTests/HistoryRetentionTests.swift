import Foundation
import PushCore
import Testing

@testable import PushStore
import TestSupport

/// The retention as `pushctl serve` and `pushctl worker` run it: a pass at once, then one per interval, the
/// cutoff on the clock passed in.
@Suite struct HistoryRetentionTests {
    static let dayMs: Int64 = 86_400_000

    static func record(_ n: Int, at ms: Int64) -> DeliveryRecord {
        DeliveryRecord(app: "a", notificationId: "id-\(n)", token: testToken(n), status: 200, attempts: 1, possiblyDuplicated: false,
                       firstAttemptMs: ms, finishedMs: ms, kind: .accepted)
    }

    @Test func aRunningRetentionTrimsAtStartAndThenEveryIntervalOnItsClock() async throws {
        let clock = ManualClock()
        let registry = try SQLiteRegistry(path: makeTempDirectory() + "/registry.sqlite", nowMs: clock.function)
        let records = [Self.record(1, at: clock.now - 3 * Self.dayMs), Self.record(2, at: clock.now)]
        try await registry.run { try $0.recordDeliveries(records) }
        let retention = HistoryRetention(registry: registry, days: 2, batchSize: 1, nowMs: clock.function)
        #expect(retention.cutoffMs == clock.now - 2 * Self.dayMs)
        let seen = Seen()
        let reports = Reports()
        await retention.run(
            every: .seconds(3600),
            sleep: { interval in
                // What each pass left, then the day moves on (three days: record 2 falls out of the window).
                let left = try await registry.run { try $0.deliveries(DeliveryQuery(app: "a")).records.map(\.notificationId) }
                guard seen.add(left, interval) < 2 else { throw CancellationError() }
                clock.advance(3 * Self.dayMs)
            },
            onPass: { reports.add($0) })
        #expect(reports.all.map { (try? $0.get())?.deliveries } == [1, 1])
        #expect(seen.remaining == [["id-2"], []])
        #expect(seen.intervals == [.seconds(3600), .seconds(3600)])
    }
}

/// What the retention's sleeps saw, recorded across threads.
private final class Seen: @unchecked Sendable {
    private let lock = NSLock()
    private var _remaining: [[String]] = []
    private var _intervals: [Duration] = []

    /// Records one sleep; returns how many there were.
    func add(_ remaining: [String], _ interval: Duration) -> Int {
        lock.lock()
        defer { lock.unlock() }
        _remaining.append(remaining)
        _intervals.append(interval)
        return _intervals.count
    }

    var remaining: [[String]] { lock.lock(); defer { lock.unlock() }; return _remaining }
    var intervals: [Duration] { lock.lock(); defer { lock.unlock() }; return _intervals }
}

/// The reports of the passes.
private final class Reports: @unchecked Sendable {
    private let lock = NSLock()
    private var results: [Result<RetentionReport, StoreError>] = []

    func add(_ result: Result<RetentionReport, StoreError>) {
        lock.lock()
        results.append(result)
        lock.unlock()
    }

    var all: [Result<RetentionReport, StoreError>] { lock.lock(); defer { lock.unlock() }; return results }
}
