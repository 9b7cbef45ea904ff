import Foundation
import Logging
import PostgresNIO
import PushCore
import PushSecrets

/// The registry on PostgreSQL: the same tables and meaning as ``SQLiteRegistry`` on SQLite, for several
/// `pushctl serve` instances and workers on several hosts sharing one database. Writes that race between
/// processes (two registrations of one token, a lease taken over) are settled by the database: upserts,
/// row locks, and lease fences checked in the writing transaction. Times come from the database's clock
/// unless a clock is passed in (tests).
public final class PostgresRegistry: RegistryStore {
    /// The database.
    public let url: PostgresURL
    let pool: PostgresPool
    let clock: (@Sendable () -> Int64)?
    /// This process's row of each counter (see ``PostgresSchema``'s migration 6): one of 16, at random.
    let counterBucket = Int16.random(in: 0..<16)
    /// Wakes workers waiting for shards (``DeliveryStore/waitForWork(timeoutMs:)``).
    let wakeups: PostgresWakeups
    /// Runs this registry's blocking calls for async callers: the pool's connections plus four, so a call
    /// that waits for a connection (or for a statement's deadline on a vanished host) never holds up all of them.
    public let executor: StoreExecutor

    /// Opens (and migrates) the database at `url` with a pool of `connections` connections. `password` is
    /// sent only if the server asks for one. A statement unanswered for `queryTimeoutSeconds` fails as
    /// unavailable and its connection is dropped. `nowMs` replaces the database's clock (tests only).
    public init(
        url: PostgresURL, password: String?, connections: Int = 4, queryTimeoutSeconds: Int = 60,
        nowMs: (@Sendable () -> Int64)? = nil, logger: Logger = Logger(label: "postgres")
    ) throws(StoreError) {
        self.url = url
        clock = nowMs
        pool = try PostgresPool(
            url: url, password: password, size: connections, queryTimeout: .seconds(Int64(queryTimeoutSeconds)), logger: logger)
        wakeups = PostgresWakeups(pool: pool, channel: Self.shardChannel)
        executor = StoreExecutor(threads: connections + 4)
        try PostgresSchema.migrate(pool)
    }

    /// Opens `url`, reading the password from the first line of `passwordFile` (a secret file, read by
    /// ``SecretFileLoader`` like every other: refused when other users may read it) or from the environment
    /// variable `passwordEnv` (never from the URL or the command line). A password file that cannot be read or
    /// a variable that is not set is a configuration problem (`.invalidInput`), not the database's.
    public static func open(
        url text: String, passwordFile: String?, passwordEnv: String?, connections: Int = 4
    ) throws(StoreError) -> PostgresRegistry {
        let url = try PostgresURL(parsing: text)
        var password: String?
        if let passwordFile {
            do { password = try SecretFileLoader.readFirstLine(passwordFile, name: "databasePasswordFile") } catch {
                throw StoreError(.invalidInput, error.message)
            }
        } else if let passwordEnv {
            guard let value = ProcessInfo.processInfo.environment[passwordEnv] else {
                throw StoreError(.invalidInput, "the database password variable \(passwordEnv) is not set")
            }
            password = value
        }
        return try PostgresRegistry(url: url, password: password, connections: connections)
    }

    /// The URL (it holds no password).
    public var location: String { url.description }

    /// Waits for a `NOTIFY` from a process that started a broadcast or gave a shard back, or `timeoutMs`.
    public func waitForWork(timeoutMs: Int) async { await wakeups.wait(timeoutMs: timeoutMs, executor: executor) }


    /// The injected clock's time, or nil for the database's (`coalesce(\(now), pp_now_ms())` in SQL).
    var now: Int64? { clock?() }

    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func schemaVersion() throws(StoreError) -> Int64 {
        try pool.withConnection { (db) throws(StoreError) -> Int64 in
            try db.row("SELECT coalesce(max(version), 0)::bigint FROM schema_version", as: (Int64).self) ?? 0
        }
    }
}
