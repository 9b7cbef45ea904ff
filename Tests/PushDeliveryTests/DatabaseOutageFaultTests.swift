import CSQLite
import Foundation
import PushCore
import PushDelivery
import PushStore
import Testing

/// A broadcast whose database stays locked longer than its outage limit stops as interrupted — nothing is
/// recorded as final that was not committed — and the same id then completes.
@Suite(.timeLimit(.minutes(2))) struct DatabaseOutageFaultTests {
    /// Holds SQLite's write lock from another connection (as another process would) until `release` is called.
    final class WriteLock: @unchecked Sendable {
        private let db: OpaquePointer

        init(_ path: String) throws {
            var handle: OpaquePointer?
            guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK, let handle else {
                throw CocoaError(.fileReadUnknown)
            }
            db = handle
            sqlite3_busy_timeout(db, 10_000)
            guard sqlite3_exec(db, "BEGIN IMMEDIATE", nil, nil, nil) == SQLITE_OK else { throw CocoaError(.fileLocking) }
        }

        func release() {
            sqlite3_exec(db, "COMMIT", nil, nil, nil)
            sqlite3_close_v2(db)
        }
    }

    @Test func aDatabaseLockedPastItsOutageLimitInterruptsTheRunAndTheSameIdCompletes() async throws {
        let f = try await EngineFixture.start()
        let tokens = try f.seed(3000)
        try f.create(id: "db-down")
        var configuration = BroadcastConfiguration()
        configuration.batchSize = 250
        configuration.storeOutageLimitMs = 1500
        configuration.leaseTtlMs = 3000
        configuration.heartbeatMs = 500
        // A short busy timeout, so each attempt fails fast and the 1.5 s limit is measured closely.
        let quick = try SQLiteRegistry(path: f.database, options: RegistryOptions(busyTimeoutMs: 100)).deliveryStore
        let broadcaster = Broadcaster(store: quick, configuration: configuration)
        let sender = f.makeSender(window: 200, answerDelay: .microseconds(500))
        let lockBox = LockBox()
        let path = f.database
        let report = try await broadcaster.run(id: "db-down", sender: sender, stop: StopFlag(), progressInterval: 0.01) { p in
            if p.done >= 500 { lockBox.takeOnce(path) }
        }
        await sender.shutdown()
        #expect(lockBox.taken)
        guard case .store(let message) = report.stop else {
            Issue.record("expected a database stop, got \(String(describing: report.stop))")
            lockBox.release()
            return
        }
        #expect(message.contains("database outage limit"))
        lockBox.release()
        let counts = try await f.registry.run { [registry = f.registry] _ in try registry.broadcastCounts(id: "db-down") }
        #expect(counts.done < 3000)
        #expect(counts.done == counts.accepted)
        // Still resumable: the same id finishes every device (taking the shard over once the stopped run's claim
        // expires, if the database could not take its release), and only what the ahead window held — twice the
        // in-flight window: sent or answered but not committed behind the checkpoint — is sent twice.
        let resumed: BroadcastReport? = try await f.run("db-down")
        let second = try #require(resumed)
        #expect(second.record.state == .completed)
        #expect(second.counts.done == 3000 && second.counts.accepted == 3000)
        let copies = f.acceptedCopies()
        #expect(Set(copies.keys) == Set(tokens))
        #expect(copies.values.filter { $0 > 1 }.count <= 2 * 200)
        try await f.stop()
    }

    /// Takes the lock once from the progress callback (on a background thread, so the run is not blocked).
    final class LockBox: @unchecked Sendable {
        private let mutex = NSLock()
        private var lock: WriteLock?
        private(set) var taken = false

        func takeOnce(_ path: String) {
            mutex.lock()
            defer { mutex.unlock() }
            guard !taken else { return }
            taken = true
            lock = try? WriteLock(path)
        }

        func release() {
            mutex.lock()
            defer { mutex.unlock() }
            lock?.release()
            lock = nil
        }
    }
}
