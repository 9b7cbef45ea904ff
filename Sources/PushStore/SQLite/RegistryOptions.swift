/// How a ``SQLiteRegistry`` opens its database.
///
/// Durability (`synchronous`), per kind of write:
/// - Registrations, unregistrations, imports, prunes, last-success times and the delivery log use
///   `NORMAL` by default. In WAL mode a commit is then durable across a crash of the *process* (the OS
///   holds the WAL pages); only a power loss or kernel crash can lose the last few commits, and never
///   corrupts the file. That is acceptable here: iOS apps re-register their token at every launch, a lost
///   prune is redone by the next send that gets 410, and the delivery log is an audit trail. `FULL` would
///   add an fsync to every commit, which costs single-registration latency for no real gain.
/// - Schema migrations always run with `FULL`: they are rare and must never be half-applied.
/// - Operators who want every commit to survive power loss set ``synchronous`` to `.full`; batched
///   writers (``SQLiteRegistry/registerBatch(_:)``, imports) keep most of their throughput because one fsync
///   covers the whole batch.
public struct RegistryOptions: Sendable, Equatable {
    /// SQLite's `synchronous` level for ordinary writes.
    public enum Synchronous: String, Sendable, Equatable {
        /// Durable across process crashes; the last commits may be lost on power loss. The default.
        case normal = "NORMAL"
        /// Every commit is fsynced before it returns.
        case full = "FULL"
    }

    /// How long a writer waits for another connection's (or process's) write lock before failing with
    /// `.busy`. Default 5000 ms.
    public var busyTimeoutMs: Int32
    /// The `synchronous` level for ordinary writes. Default `.normal` (see the type's documentation).
    public var synchronous: Synchronous
    /// The writer connection's page cache in KiB. Default 32768 (32 MB): tokens are random, so imports and
    /// registrations land all over the (app, token) index, and a large cache keeps a million-token index's
    /// interior pages hot. A broadcast writes its outcomes in token order and needs only a few MB
    /// (``broadcastWriterCacheKiB``), which keeps `pushctl broadcast` small.
    public var writerCacheKiB: Int

    /// The writer cache a broadcast process uses (2 MB): its writes are sequential.
    public static let broadcastWriterCacheKiB = 2048

    /// For a short-lived process (one command): when the registry closes with less than
    /// ``SQLiteRegistry/walKeptOnCloseBytes`` of WAL, leave it for the next process instead of checkpointing it into the
    /// database and deleting it, which costs a one-device `pushctl send` up to five fsyncs. Default false: a
    /// long-running server keeps SQLite's checkpoint on close, so once it has stopped the `.sqlite` file alone
    /// holds everything.
    public var keepsSmallWALOnClose: Bool

    /// Creates options with the documented defaults.
    public init(
        busyTimeoutMs: Int32 = 5000, synchronous: Synchronous = .normal, writerCacheKiB: Int = 32768,
        keepsSmallWALOnClose: Bool = false
    ) {
        self.busyTimeoutMs = busyTimeoutMs
        self.synchronous = synchronous
        self.writerCacheKiB = max(64, writerCacheKiB)
        self.keepsSmallWALOnClose = keepsSmallWALOnClose
    }

    /// The options of a one-shot `pushctl` command: the defaults, with small WALs kept on close.
    public static let command = RegistryOptions(keepsSmallWALOnClose: true)
}
