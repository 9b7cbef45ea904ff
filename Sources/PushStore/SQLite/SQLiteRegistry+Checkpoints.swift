import PushCore

/// Runs WAL checkpoints on a connection of its own (see ``SQLiteRegistry/startBackgroundCheckpoints(intervalMs:)``),
/// each on the registry's store executor.
public final class BackgroundCheckpointer: Sendable {
    private let connection: Guarded<Connection>
    private let interval: Duration
    private let executor: StoreExecutor

    init(connection: Connection, intervalMs: Int, executor: StoreExecutor) {
        self.connection = Guarded(connection)
        self.interval = .milliseconds(max(1, intervalMs))
        self.executor = executor
    }

    /// Checkpoints every interval until the task is cancelled, then once more.
    public func run() async {
        while !Task.isCancelled {
            do { try await Task.sleep(for: interval) } catch { break }
            _ = await executor.perform { self.checkpoint() }
        }
        _ = await executor.perform { self.checkpoint() }
    }

    /// One passive checkpoint: copies what it can without waiting for (or blocking) writers and readers.
    @available(*, noasync, message: "blocks on the database")
    public func checkpoint() {
        try? connection.withLock { (db) throws(StoreError) in try db.execute("PRAGMA wal_checkpoint(PASSIVE)") }
    }
}

extension SQLiteRegistry {
    /// For long-running servers: takes WAL checkpoints off the commit path. By default SQLite checkpoints
    /// inside whichever commit crosses the WAL threshold, stalling that request for as long as copying the
    /// WAL takes (the registration benchmark's p99 outliers). This turns automatic checkpoints off for this
    /// registry's writer and returns a checkpointer whose ``BackgroundCheckpointer/run()`` takes passive ones
    /// every `intervalMs` on a separate connection. Other processes sharing the file keep SQLite's automatic
    /// checkpoints, so the WAL stays bounded.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func startBackgroundCheckpoints(intervalMs: Int = 250) throws(StoreError) -> BackgroundCheckpointer {
        let connection = try Connection(path: path, busyTimeoutMs: options.busyTimeoutMs, synchronous: options.synchronous.rawValue)
        try writer.withLock { (db) throws(StoreError) in try db.execute("PRAGMA wal_autocheckpoint = 0") }
        return BackgroundCheckpointer(connection: connection, intervalMs: intervalMs, executor: executor)
    }
}
