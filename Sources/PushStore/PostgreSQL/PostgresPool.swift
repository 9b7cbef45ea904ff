import Dispatch
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import PostgresNIO
import Synchronization
import PushCore

/// The one place PushStore talks to postgres-nio: a small pool of connections used synchronously, like the
/// SQLite registry, by threads that are not event-loop threads (the engine's store queue, CLI commands,
/// the server's registration batcher). Each call waits on a future (`.wait()`): every caller is a blocking store
/// thread — a ``StoreExecutor`` thread, a dedicated writer thread, or a CLI command's blocking registry call — never
/// async code, which reaches these methods only through `run { }` (the registry's blocking API is `noasync`). The
/// I/O runs on the pool's own event loop, never on Swift's cooperative pool, so a caller blocking here cannot
/// starve the queries it waits for. Nothing else waits: deinit closes and shuts down without waiting.
///
/// Every failure becomes a ``StoreError``: lost connections, refused connections, serialization failures,
/// deadlocks and lock timeouts are transient (`.ioError` / `.busy`, which the engine retries), a unique
/// violation is `.constraint`, the rest `.unknown`. A connection that failed is closed, never reused.
final class PostgresPool: Sendable {
    let url: PostgresURL
    private let configuration: PostgresConnection.Configuration
    private let group: MultiThreadedEventLoopGroup
    private let idle = Mutex<[PostgresConnection]>([])
    private let permits: DispatchSemaphore
    private let nextId = Atomic<Int>(1)
    let logger: Logger
    /// How long one statement may go unanswered before its connection is given up (see ``PostgresSession``).
    let queryTimeout: TimeAmount

    /// A pool of at most `size` connections to `url`.
    init(url: PostgresURL, password: String?, size: Int, queryTimeout: TimeAmount, logger: Logger) throws(StoreError) {
        self.url = url
        self.logger = logger
        self.queryTimeout = queryTimeout
        var tls = PostgresConnection.Configuration.TLS.disable
        if url.requireTLS {
            do {
                tls = .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
            } catch {
                throw StoreError(.cannotOpen, "cannot set up TLS for \(url): \(error)")
            }
        }
        var configuration = PostgresConnection.Configuration(
            host: url.host, port: url.port, username: url.user, password: password, database: url.database, tls: tls)
        configuration.options.connectTimeout = .seconds(10)
        self.configuration = configuration
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        permits = DispatchSemaphore(value: max(1, size))
    }

    deinit {
        let connections = idle.withLock { c in
            let all = c
            c.removeAll()
            return all
        }
        // Not waited for: the last reference may go away on any thread, a cooperative or an event-loop one
        // included (where `.wait()` would block it or trap). Each connection is kept until its close completed
        // (postgres-nio asserts a connection is closed when it goes away), then the event loop shuts down.
        let group = self.group
        let closed = connections.map { connection in
            connection.close().always { _ in withExtendedLifetime(connection) {} }
        }
        EventLoopFuture.andAllComplete(closed, on: group.next()).whenComplete { _ in group.shutdownGracefully { _ in } }
    }

    /// Runs `body` on a pooled connection (opened if none is idle).
    func withConnection<T>(_ body: (PostgresSession) throws(StoreError) -> T) throws(StoreError) -> T {
        permits.wait()
        defer { permits.signal() }
        // An idle connection the server closed meanwhile (a restart, `pg_ctl stop`) is dropped, never used: a query
        // written to a closed channel is never answered, and would wait for the statement deadline.
        var pooled = idle.withLock { $0.popLast() }
        while let stale = pooled, stale.isClosed { pooled = idle.withLock { $0.popLast() } }
        let connection: PostgresConnection
        if let pooled { connection = pooled } else { connection = try openConnection() }
        let session = PostgresSession(connection: connection, timeout: queryTimeout, logger: logger)
        do throws(StoreError) {
            let value = try body(session)
            if !session.broken { idle.withLock { $0.append(connection) } }
            return value
        } catch {
            if session.broken { _ = try? connection.close().wait() } else { idle.withLock { $0.append(connection) } }
            throw error
        }
    }

    /// Runs `body` in one transaction (READ COMMITTED): committed when it returns, rolled back when it throws.
    func transaction<T>(_ body: (PostgresSession) throws(StoreError) -> T) throws(StoreError) -> T {
        try withConnection { (session) throws(StoreError) -> T in
            try session.execute("BEGIN")
            do throws(StoreError) {
                let value = try body(session)
                try session.execute("COMMIT")
                return value
            } catch {
                if !session.broken { try? session.execute("ROLLBACK") }
                throw error
            }
        }
    }

    /// TCP keepalive on every connection: probes after 10 s of silence, every 5 s, 3 unanswered ones drop it;
    /// and data unacknowledged for 20 s drops it too (`TCP_USER_TIMEOUT`). A host that vanished without closing
    /// its connections (a cut link) is noticed in about 25 s even by an idle or `LISTEN`ing connection, instead of
    /// the kernel's two hours, and no wait on it outlasts the statement deadline.
    static let keepalive = (idleSeconds: 10, intervalSeconds: 5, probes: 3, userTimeoutMs: 20_000)

    /// A new connection outside the pool (the caller closes it), with TCP keepalives (``keepalive``).
    func openConnection() throws(StoreError) -> PostgresConnection {
        let id = nextId.wrappingAdd(1, ordering: .relaxed).oldValue
        let loop = group.next()
        let k = Self.keepalive
        do {
            let channel = try ClientBootstrap(group: loop)
                .connectTimeout(configuration.options.connectTimeout)
                .channelOption(ChannelOptions.socketOption(.so_keepalive), value: 1)
                // Linux's TCP_KEEPIDLE (4), TCP_KEEPINTVL (5), TCP_KEEPCNT (6) and TCP_USER_TIMEOUT (18).
                .channelOption(ChannelOptions.tcpOption(.init(rawValue: 4)), value: SocketOptionValue(k.idleSeconds))
                .channelOption(ChannelOptions.tcpOption(.init(rawValue: 5)), value: SocketOptionValue(k.intervalSeconds))
                .channelOption(ChannelOptions.tcpOption(.init(rawValue: 6)), value: SocketOptionValue(k.probes))
                .channelOption(ChannelOptions.tcpOption(.init(rawValue: 18)), value: SocketOptionValue(k.userTimeoutMs))
                .connect(host: url.host, port: url.port).wait()
            var established = PostgresConnection.Configuration(
                establishedChannel: channel, tls: configuration.tls, username: configuration.username,
                password: configuration.password, database: configuration.database)
            established.options = configuration.options
            // As the host-based configuration would: the host name (not an address) for TLS's SNI and verification.
            let host = url.host
            let isAddress = host.contains(":") || host.allSatisfy { $0.isNumber || $0 == "." }
            if established.options.tlsServerName == nil, !isAddress { established.options.tlsServerName = host }
            do {
                return try PostgresConnection.connect(
                    on: loop, configuration: established, id: id, logger: logger
                ).wait()
            } catch {
                _ = try? channel.close().wait()
                throw error
            }
        } catch {
            throw PostgresSession.mapped(error, url: url.description)
        }
    }
}

/// One connection lent by ``PostgresPool`` for the length of a call.
///
/// Every statement has a deadline: a connection whose server vanished without closing it (a cut link, a
/// host gone) or that the server closed while a statement was on its way can otherwise leave the caller
/// waiting forever. Past the deadline the statement fails as `.ioError` (transient: the engine retries it
/// on a new connection) and this connection is closed.
final class PostgresSession {
    let connection: PostgresConnection
    let logger: Logger
    let timeout: TimeAmount
    /// True once the connection failed: the pool closes it instead of reusing it.
    private(set) var broken = false

    init(connection: PostgresConnection, timeout: TimeAmount, logger: Logger) {
        self.connection = connection
        self.timeout = timeout
        self.logger = logger
    }

    /// Runs `query` and returns its rows.
    @discardableResult
    func query(_ query: PostgresQuery) throws(StoreError) -> PostgresQueryResult {
        let loop = connection.eventLoop
        let promise = loop.makePromise(of: PostgresQueryResult.self)
        let timeout = self.timeout
        let deadline = loop.scheduleTask(in: timeout) {
            promise.fail(QueryTimeout(seconds: Int(timeout.nanoseconds / 1_000_000_000)))
        }
        connection.query(query, logger: logger).cascade(to: promise)
        do {
            let result = try promise.futureResult.wait()
            deadline.cancel()
            return result
        } catch let timedOut as QueryTimeout {
            broken = true
            let _: EventLoopFuture<Void> = connection.close()
            throw StoreError(.ioError, "PostgreSQL did not answer within \(timedOut.seconds) s; the connection was dropped")
        } catch {
            deadline.cancel()
            let mapped = Self.mapped(error, url: nil)
            if mapped.code == .ioError || connection.isClosed { broken = true }
            throw mapped
        }
    }

    private struct QueryTimeout: Error {
        let seconds: Int
    }

    /// Runs a statement with no parameters.
    func execute(_ sql: String) throws(StoreError) {
        try query(PostgresQuery(unsafeSQL: sql))
    }

    /// Rows of `query` decoded as `T` (a tuple of column types).
    func rows<each C: PostgresDecodable>(_ query: PostgresQuery, as: (repeat each C).Type) throws(StoreError) -> [(repeat each C)] {
        let result = try self.query(query)
        var out: [(repeat each C)] = []
        do {
            for row in result { out.append(try row.decode((repeat each C).self)) }
        } catch {
            throw StoreError(.corrupt, "unreadable row: \(String(reflecting: error))")
        }
        return out
    }

    /// The first row of `query`, or nil.
    func row<each C: PostgresDecodable>(_ query: PostgresQuery, as: (repeat each C).Type) throws(StoreError) -> (repeat each C)? {
        try rows(query, as: (repeat each C).self).first
    }

    /// The number of rows a statement changed.
    func changes(_ query: PostgresQuery) throws(StoreError) -> Int {
        try self.query(query).metadata.rows ?? 0
    }

    /// The registry's code for a SQLSTATE: serialization failures, deadlocks, lock timeouts and cancelled
    /// statements are `.busy`; connection failures, shutdowns and exhausted resources `.ioError` (both transient);
    /// authentication and a missing database `.cannotOpen`; a unique violation `.constraint`; corrupted data or
    /// index `.corrupt`; other data and integrity errors `.invalidInput`.
    static func code(sqlstate state: String) -> StoreError.Code {
        switch state {
        case "23505": .constraint
        case "40001", "40P01", "55P03", "57014": .busy  // serialization, deadlock, lock timeout, cancelled
        case let s where s.hasPrefix("08") || s.hasPrefix("57P") || s.hasPrefix("53"): .ioError  // connection, shutdown, resources
        case let s where s.hasPrefix("28"): .cannotOpen  // authentication
        case "3D000": .cannotOpen  // no such database
        case "XX001", "XX002": .corrupt  // data corrupted, index corrupted
        case let s where s.hasPrefix("22") || s.hasPrefix("23"): .invalidInput
        default: .unknown(0)
        }
    }

    /// Translates postgres-nio's errors into ``StoreError``.
    static func mapped(_ error: any Error, url: String?) -> StoreError {
        let place = url.map { " (\($0))" } ?? ""
        guard let psql = error as? PSQLError else {
            // Connection refused, DNS, timeouts: the database is unreachable for now.
            return StoreError(.ioError, "cannot reach PostgreSQL\(place): \(error)")
        }
        switch psql.code {
        case .server:
            let state = psql.serverInfo?[.sqlState] ?? ""
            let message = psql.serverInfo?[.message] ?? "\(psql)"
            let detail = psql.serverInfo?[.detail].map { " (\($0))" } ?? ""
            let text = "PostgreSQL\(place): \(message)\(detail) [\(state)]"
            return StoreError(code(sqlstate: state), text, backendCode: .postgres(sqlstate: state))
        case .serverClosedConnection, .clientClosedConnection, .connectionError, .uncleanShutdown:
            return StoreError(.ioError, "lost the PostgreSQL connection\(place): \(psql.underlying.map { "\($0)" } ?? "\(psql.code)")")
        case .authMechanismRequiresPassword:
            return StoreError(.cannotOpen, "PostgreSQL\(place) wants a password: set databasePasswordFile or databasePasswordEnv")
        case .sslUnsupported:
            return StoreError(.cannotOpen, "PostgreSQL\(place) does not offer TLS but the URL says sslmode=require")
        default:
            return StoreError(.unknown(0), "PostgreSQL\(place): \(String(reflecting: psql))")
        }
    }
}
