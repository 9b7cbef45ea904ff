import Foundation

/// Runs WAL checkpoints on its own thread and connection (see ``SQLiteRegistry/startBackgroundCheckpoints(intervalMs:)``).
public final class BackgroundCheckpointer: @unchecked Sendable {
    private let condition = NSCondition()
    private var stopped = false
    private let done = DispatchSemaphore(value: 0)

    init(connection: Connection, intervalMs: Int) {
        let connection = Guarded(connection)  // used by this thread only; the lock satisfies Sendable
        let thread = Thread { [self] in
            while true {
                condition.lock()
                if !stopped { _ = condition.wait(until: Date(timeIntervalSinceNow: Double(intervalMs) / 1000)) }
                let stop = stopped
                condition.unlock()
                // PASSIVE copies what it can without waiting for (or blocking) writers and readers.
                try? connection.withLock { (db) throws(StoreError) in try db.execute("PRAGMA wal_checkpoint(PASSIVE)") }
                if stop { break }
            }
            done.signal()
        }
        thread.name = "pushctl-checkpoints"
        thread.start()
    }

    /// Runs a last checkpoint and stops the thread.
    public func stop() {
        condition.lock()
        let first = !stopped
        stopped = true
        condition.signal()
        condition.unlock()
        if first { done.wait() }
    }
}

extension SQLiteRegistry {
    /// For long-running servers: takes WAL checkpoints off the commit path. By default SQLite checkpoints
    /// inside whichever commit crosses the WAL threshold, stalling that request for as long as copying the
    /// WAL takes (the registration benchmark's p99 outliers). This turns automatic checkpoints off for this
    /// registry's writer and runs passive ones every `intervalMs` on a separate connection and thread.
    /// Other processes sharing the file keep SQLite's automatic checkpoints, so the WAL stays bounded.
    public func startBackgroundCheckpoints(intervalMs: Int = 250) throws(StoreError) -> BackgroundCheckpointer {
        let connection = try Connection(path: path, busyTimeoutMs: options.busyTimeoutMs, synchronous: options.synchronous.rawValue)
        try writer.withLock { (db) throws(StoreError) in try db.execute("PRAGMA wal_autocheckpoint = 0") }
        return BackgroundCheckpointer(connection: connection, intervalMs: intervalMs)
    }
}
