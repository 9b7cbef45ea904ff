import Foundation
import PushCore

/// The device registry on one SQLite file: devices per app, prune log and delivery log.
///
/// Safe to share between threads and tasks, and between processes on the same file: writes take SQLite's
/// write lock up front (`BEGIN IMMEDIATE`) and wait up to the busy timeout, so `SQLITE_BUSY` does not
/// escape under ordinary contention. Reads use other connections (a ``ReaderPool`` of up to ``readerConnections``),
/// so a broadcast stream never waits for writers (WAL) nor reads for each other, and each streamed batch is its own
/// short read transaction so checkpoints are not starved.
public final class SQLiteRegistry: RegistryStore {
    /// The database file.
    public let path: String
    /// The options it was opened with.
    public let options: RegistryOptions
    /// The clock for created/registered/prune times (ms since 1970); injected so tests control time.
    let nowMs: @Sendable () -> Int64
    let writer: Guarded<Connection>
    let readers: ReaderPool
    /// Runs this registry's blocking calls for async callers (see ``StoreExecutor/defaultThreads``).
    public let executor = StoreExecutor()

    /// Read connections at most: 4. Reads are short and mostly CPU (pages in cache), so more readers than cores
    /// gain little (the box this was measured on has 2; a server has a few), while each reader costs a file
    /// descriptor, its own page cache (SQLite's default, 2 MB) and its prepared statements. Half the store
    /// executor's 8 threads: a burst of reads leaves threads for writes, whose connection is separate.
    public static let readerConnections = 4

    /// The system clock in ms since 1970.
    public static let systemNowMs: @Sendable () -> Int64 = {
        Int64((Date().timeIntervalSince1970 * 1000).rounded())
    }

    /// Opens the registry at `path`, creating the file and its parent directories if needed, and migrates
    /// an older schema. Throws `.schemaTooNew` for a database written by a newer build.
    public init(
        path: String, options: RegistryOptions = .init(),
        nowMs: @escaping @Sendable () -> Int64 = SQLiteRegistry.systemNowMs
    ) throws(StoreError) {
        self.path = path
        self.options = options
        self.nowMs = nowMs
        let parent = (path as NSString).deletingLastPathComponent
        if !parent.isEmpty {
            do {
                try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
            } catch {
                throw StoreError(.cannotOpen, "cannot create directory \(parent): \(error.localizedDescription)")
            }
        }
        let write = try Connection(path: path, busyTimeoutMs: options.busyTimeoutMs, synchronous: "FULL")
        try SQLiteSchema.migrate(write, path: path)
        try write.execute("PRAGMA synchronous = \(options.synchronous.rawValue)")
        // The writer's page cache (see `RegistryOptions.writerCacheKiB`). The reader keeps SQLite's small
        // default so streaming stays within a few MB.
        try write.execute("PRAGMA cache_size = -\(options.writerCacheKiB)")
        // Checkpoint at 16 MB of WAL instead of SQLite's 4 MB: 4× fewer checkpoint fsyncs for registration
        // bursts, while one checkpoint stays short enough not to stall a registration for long.
        try write.execute("PRAGMA wal_autocheckpoint = 4096")
        let openReader = { () throws(StoreError) -> Connection in
            let read = try Connection(path: path, busyTimeoutMs: options.busyTimeoutMs, synchronous: options.synchronous.rawValue)
            try read.execute("PRAGMA query_only = ON")
            return read
        }
        writer = Guarded(write)
        readers = ReaderPool(first: try openReader(), size: Self.readerConnections, open: openReader)
    }

    /// Below this much WAL the registry's last connection closes without a checkpoint (see `deinit`).
    static let walKeptOnCloseBytes = 512 * 1024

    /// With ``RegistryOptions/keepsSmallWALOnClose`` (a short-lived process: `pushctl send`, a cron broadcast), a
    /// few pages of WAL are left for the next process instead of checkpointed on close: the checkpoint, deleting
    /// the WAL and creating it again next time cost up to five fsyncs per command, and reading back at most
    /// 512 KB when the next process opens the file costs far less. A larger WAL (after a broadcast) is
    /// checkpointed as before. Durability is unchanged: what is committed is in the WAL either way.
    deinit {
        var info = stat()
        guard options.keepsSmallWALOnClose, stat(path + "-wal", &info) == 0,
              Int(info.st_size) < Self.walKeptOnCloseBytes else { return }
        try? writer.withLock { (db) throws(StoreError) in try db.keepWALOnClose() }
        readers.forEachIdle { try? $0.keepWALOnClose() }
    }

    /// The file path.
    public var location: String { path }

    /// SQLite has no notices between processes: waiting for work is polling.
    public func waitForWork(timeoutMs: Int) async { try? await Task.sleep(for: .milliseconds(max(1, timeoutMs))) }


    /// Runs `body` in one write transaction on the writer connection. Waits at most the busy timeout for the
    /// connection (held by another call of this process) and then as long again for SQLite's write lock (held by
    /// another process), so no write waits without bound.
    func write<T>(_ body: (Connection) throws(StoreError) -> T) throws(StoreError) -> T {
        try writer.withLock(waitingAtMostMs: options.busyTimeoutMs) { (db) throws(StoreError) -> T in
            try db.transaction(write: true) { () throws(StoreError) -> T in try body(db) }
        }
    }

    /// Runs `body` on a reader connection (each statement is its own short read transaction).
    func read<T>(_ body: (Connection) throws(StoreError) -> T) throws(StoreError) -> T {
        try readers.withConnection(body)
    }

    /// `PRAGMA integrity_check`: `"ok"` for a sound file, otherwise SQLite's problem list.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func integrityCheck() throws(StoreError) -> String {
        try read { (db) throws(StoreError) -> String in
            let statement = try db.statement("PRAGMA integrity_check")
            defer { statement.reset() }
            var lines: [String] = []
            while try statement.step() { lines.append(statement.text(0)) }
            return lines.joined(separator: "\n")
        }
    }

    /// The schema version of the open database.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func schemaVersion() throws(StoreError) -> Int64 {
        try read { (db) throws(StoreError) -> Int64 in
            let statement = try db.statement("SELECT max(version) FROM schema_version")
            defer { statement.reset() }
            return try statement.step() ? statement.int64(0) : 0
        }
    }

    /// Decodes the standard device columns (token, environment, channels, created, registered, success, service,
    /// subscription).
    static func device(from row: Statement) throws(StoreError) -> RegisteredDevice {
        // Stored tokens were validated and canonicalised on the way in; re-parsing a million of them per
        // broadcast was most of the streaming cost.
        var device = RegisteredDevice(
            token: DeviceToken(trustedCanonicalHex: row.text(0)), environment: APNsEnvironment(rawValue: row.text(1)) ?? .production,
            channels: Channels.decode(row.text(2)), createdMs: row.int64(3), lastRegisteredMs: row.int64(4),
            lastSuccessMs: row.optionalInt64(5))
        device.setService(row.optionalText(6), subscription: row.optionalText(7))
        return device
    }
}
