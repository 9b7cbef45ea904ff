import PushSimulator
import CSQLite
import Foundation
import PushCore
import PushStore
import Testing
import func TestSupport.waitUntil

/// The fault suite's server scenario: a 5,000-device send job whose database another connection write-locks
/// for 10 s. Run by `make test` after the other suites (`--filter FaultTests --no-parallel`).
@Suite(.serialized, .timeLimit(.minutes(1))) struct JobFaultTests {
    typealias Setup = NotificationJobTests.Setup

    /// Holds SQLite's write lock on `path` for `seconds` from another connection, as another process would
    /// (a long import, a backup, a migration). Runs on its own thread; returns whether the lock was taken.
    static func holdWriteLock(_ path: String, seconds: Double) async -> Bool {
        await withCheckedContinuation { (c: CheckedContinuation<Bool, Never>) in
            Thread.detachNewThread {
                var db: OpaquePointer?
                guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK, let db else {
                    c.resume(returning: false)
                    return
                }
                defer { sqlite3_close_v2(db) }
                sqlite3_busy_timeout(db, 10_000)
                guard sqlite3_exec(db, "BEGIN IMMEDIATE", nil, nil, nil) == SQLITE_OK else {
                    c.resume(returning: false)
                    return
                }
                Thread.sleep(forTimeInterval: seconds)
                let committed = sqlite3_exec(db, "COMMIT", nil, nil, nil) == SQLITE_OK
                c.resume(returning: committed)
            }
        }
    }

    @Test func aJobWhoseDatabaseIsWriteLockedForTenSecondsDropsNothing() async throws {
        let setup = try await Setup.make()
        let (s, registry) = try await setup.server()
        let tokens = try setup.seed(registry, 5000)
        let dead = Set(tokens.enumerated().filter { $0.offset % 20 == 7 }.map(\.element))
        for token in dead { setup.simulator.unregister(token) }
        let started = Date()
        let r = try await s.request("POST", "/v1/apps/example/notifications", key: "send", contentType: "application/json",
                                    body: #"{"id":"locked","all":true,"alert":"Digest"}"#)
        #expect(r.status == 202)
        try await waitUntil(deadline: .seconds(60), "1000 devices done") {
            try await registry.run { [registry = registry] _ in try registry.broadcastCounts(id: "locked") }.done >= 1000
        }
        let doneBeforeLock = try await registry.run { [registry = registry] _ in try registry.broadcastCounts(id: "locked") }.done
        #expect(doneBeforeLock < 5000, "the job finished before the lock was taken")
        let lockStarted = Date()
        let locked = await Self.holdWriteLock(setup.config.database, seconds: 10)
        #expect(locked)
        #expect(Date().timeIntervalSince(lockStarted) >= 10)
        let status = try await NotificationJobTests().waitForState(s, "locked", ["completed", "interrupted"], seconds: 120)
        let seconds = Date().timeIntervalSince(started)
        #expect(status["state"]?.stringValue == "completed")
        #expect(status["total"] == .int(5000))
        #expect(status["done"] == .int(5000))  // nothing dropped: done == total
        #expect(status["accepted"] == .int(Int64(5000 - dead.count)))
        #expect(status["pruned"] == .int(Int64(dead.count)))
        #expect(status["deferred"] == .int(0))
        var copies: [DeviceToken: Int] = [:]
        for received in setup.simulator.received { copies[received.request.token, default: 0] += 1 }
        let live = Set(tokens).subtracting(dead)
        let lost = live.subtracting(copies.keys)
        let twice = copies.values.filter { $0 > 1 }.count
        #expect(lost.isEmpty)
        #expect(twice <= 500)
        let read1 = try await registry.run { [registry = registry] _ in try registry.count(app: "example") }
        #expect(read1 == live.count)
        print("FAULT database write-locked for 10 s during a server job: devices 5000, lost \(lost.count), sent twice \(twice) (window 500), done \(status["done"]?.intValue ?? -1) of total \(status["total"]?.intValue ?? -1), duration \(String(format: "%.1f", seconds)) s")
        try await s.stop()
        try await setup.stop()
    }
}
