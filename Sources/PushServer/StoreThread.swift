import NIOPosix

/// Runs blocking registry work (SQLite calls, PostgreSQL round trips) on NIO's blocking thread pool, so request
/// handlers never block Swift's cooperative pool.
enum StoreThread {
    /// Runs `body` on a blocking-pool thread and returns its result (or rethrows its error).
    static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await NIOThreadPool.singleton.runIfActive { try body() }
    }
}
