import Foundation

/// A real PostgreSQL server for tests: Debian's `postgresql` binaries, a cluster made by `initdb` in a
/// temporary directory (as the `postgres` user when running as root: initdb refuses root), listening on a
/// free loopback port, started once per test process and stopped when it exits. Each test gets its own
/// database from ``makeDatabase(_:)``.
///
/// `PUSHPROVIDER_TEST_POSTGRES=postgres://user@host:port` uses an existing server instead (its user must
/// be allowed to create databases). Without either, the tests that need it fail with a message saying so —
/// they are never skipped.
public final class PostgresTestServer: Sendable {
    /// The server's host.
    public let host: String
    /// The server's port.
    public let port: Int
    /// A role that can create databases.
    public let user: String
    /// The cluster directory when this process started the server.
    let directory: String?

    nonisolated(unsafe) private static var started: PostgresTestServer?
    private static let lock = NSLock()

    /// The process's server, started on first use (`initdb` and `pg_ctl start`: seconds), off the cooperative pool.
    public static func shared() async throws -> PostgresTestServer {
        try await offThePool { try sharedBlocking() }
    }

    /// ``shared()`` for synchronous code.
    @available(*, noasync, message: "blocks the calling thread: use the async shared()")
    public static func shared() throws -> PostgresTestServer { try sharedBlocking() }

    private static func sharedBlocking() throws -> PostgresTestServer {
        lock.lock()
        defer { lock.unlock() }
        if let started { return started }
        let server = try start()
        started = server
        if server.directory != nil { atexit { PostgresTestServer.stopAtExit() } }
        return server
    }

    init(host: String, port: Int, user: String, directory: String?) {
        self.host = host
        self.port = port
        self.user = user
        self.directory = directory
    }

    /// A new empty database named after `label`, as a `postgres://` URL (no password: the test cluster
    /// trusts loopback connections). `CREATE DATABASE` through `psql` takes up to seconds on a busy box: it waits
    /// off the cooperative pool.
    public func makeDatabase(_ label: String = "t") async throws -> String {
        try await offThePool { [self] in try makeDatabaseBlocking(label) }
    }

    /// ``makeDatabase(_:)`` for synchronous code.
    @available(*, noasync, message: "blocks the calling thread: use the async makeDatabase(_:)")
    public func makeDatabase(_ label: String = "t") throws -> String { try makeDatabaseBlocking(label) }

    private func makeDatabaseBlocking(_ label: String) throws -> String {
        let safe = label.lowercased().filter { $0.isLetter || $0.isNumber }.prefix(20)
        let name = "pp_\(safe)_\(UUID().uuidString.prefix(8).lowercased())"
        _ = try psqlBlocking("CREATE DATABASE \(name)", database: "postgres")
        return "postgres://\(user)@\(host):\(port)/\(name)"
    }

    /// Runs one SQL command through `psql` against `database` (default `postgres`), off the cooperative pool.
    @discardableResult
    public func psql(_ sql: String, database: String = "postgres") async throws -> String {
        try await offThePool { [self] in try psqlBlocking(sql, database: database) }
    }

    /// ``psql(_:database:)`` for synchronous code.
    @available(*, noasync, message: "blocks the calling thread: use the async psql(_:database:)")
    @discardableResult
    public func psql(_ sql: String, database: String = "postgres") throws -> String { try psqlBlocking(sql, database: database) }

    private func psqlBlocking(_ sql: String, database: String) throws -> String {
        try Self.run(
            Self.which("psql") ?? "/usr/bin/psql",
            ["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", host, "-p", "\(port)", "-U", user, "-d", database, "-c", sql])
    }

    private static func start() throws -> PostgresTestServer {
        if let given = ProcessInfo.processInfo.environment["PUSHPROVIDER_TEST_POSTGRES"], !given.isEmpty {
            // postgres://user@host:port
            let rest = given.replacingOccurrences(of: "postgres://", with: "").replacingOccurrences(of: "postgresql://", with: "")
            let parts = rest.split(separator: "@", maxSplits: 1).map(String.init)
            let hostPort = (parts.count == 2 ? parts[1] : parts[0]).split(separator: "/").first.map(String.init) ?? ""
            let hp = hostPort.split(separator: ":").map(String.init)
            return PostgresTestServer(
                host: hp.first ?? "127.0.0.1", port: hp.count > 1 ? Int(hp[1]) ?? 5432 : 5432,
                user: parts.count == 2 ? parts[0] : "postgres", directory: nil)
        }
        return try startPrivate()
    }

    /// A server of its own (a new cluster, always: never `PUSHPROVIDER_TEST_POSTGRES`), for a test that stops and
    /// starts it (``stop()``, ``restart()``); the test removes it with ``destroy()``.
    public static func startPrivate() throws -> PostgresTestServer {
        guard binDirectory() != nil else {
            throw TestServerError(
                "PostgreSQL server binaries not found (/usr/lib/postgresql/*/bin/initdb): run `make deps` "
                    + "(installs Debian's postgresql) or set PUSHPROVIDER_TEST_POSTGRES")
        }
        let dir = NSTemporaryDirectory() + "pushprovider-pg-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        if getuid() == 0 { try run("/bin/chown", ["-R", "postgres:postgres", dir]) }
        try asOwner("initdb", ["-D", dir + "/data", "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8", "--locale=C.UTF-8"])
        let server = PostgresTestServer(host: "127.0.0.1", port: try freePort(), user: "postgres", directory: dir)
        try server.restart()
        return server
    }

    /// Runs a PostgreSQL tool as the cluster's owner (`postgres` when running as root: initdb refuses root).
    private static func asOwner(_ tool: String, _ args: [String]) throws {
        guard let bin = binDirectory() else { throw TestServerError("PostgreSQL server binaries not found") }
        if getuid() == 0 {
            try run("/usr/sbin/runuser", ["-u", "postgres", "--", bin + "/" + tool] + args)
        } else {
            try run(bin + "/" + tool, args)
        }
    }

    /// Starts this process's cluster (again) on its port: `pg_ctl start`, waiting until it accepts connections.
    public func restart() throws {
        guard let dir = directory else { throw TestServerError("this server was not started by the tests") }
        try Self.asOwner("pg_ctl", [
            "-D", dir + "/data", "-l", dir + "/log", "-w", "-t", "60", "-o",
            "-p \(port) -k \(dir) -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300",
            "start",
        ])
    }

    /// Stops this process's cluster as an operator would for maintenance: `pg_ctl stop -m fast` (open connections
    /// are terminated, new ones refused).
    public func stop() throws {
        guard let dir = directory else { throw TestServerError("this server was not started by the tests") }
        try Self.asOwner("pg_ctl", ["-D", dir + "/data", "-m", "fast", "-w", "stop"])
    }

    /// Stops a private server at once and removes its cluster.
    public func destroy() {
        guard let dir = directory else { return }
        _ = try? Self.asOwner("pg_ctl", ["-D", dir + "/data", "-m", "immediate", "-w", "stop"])
        try? FileManager.default.removeItem(atPath: dir)
    }

    private static func stopAtExit() {
        guard let server = started, let dir = server.directory, let bin = binDirectory() else { return }
        let args = ["-D", dir + "/data", "-m", "immediate", "-w", "stop"]
        if getuid() == 0 {
            _ = try? run("/usr/sbin/runuser", ["-u", "postgres", "--", bin + "/pg_ctl"] + args)
        } else {
            _ = try? run(bin + "/pg_ctl", args)
        }
        try? FileManager.default.removeItem(atPath: dir)
    }

    static func binDirectory() -> String? {
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).sorted { (Int($0) ?? 0) > (Int($1) ?? 0) }
        return versions.map { "\(root)/\($0)/bin" }.first { FileManager.default.isExecutableFile(atPath: $0 + "/initdb") }
    }

    static func which(_ tool: String) -> String? {
        for dir in ["/usr/bin", "/usr/local/bin", "/bin"] where FileManager.default.isExecutableFile(atPath: "\(dir)/\(tool)") {
            return "\(dir)/\(tool)"
        }
        return nil
    }

    /// A loopback port nothing listens on now (bound to 0 and released).
    public static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestServerError("socket() failed") }
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = 0
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) == 0 && getsockname(fd, $0, &len) == 0 }
        }
        guard ok else { throw TestServerError("cannot find a free port") }
        return Int(UInt16(bigEndian: addr.sin_port))
    }

    @discardableResult
    static func run(_ tool: String, _ args: [String]) throws -> String {
        // posix_spawn + waitpid rather than Foundation's Process (whose child reaping hung here with the
        // server pg_ctl leaves behind); output goes to a file, not a pipe the server would inherit and hold.
        let path = NSTemporaryDirectory() + "pushprovider-run-\(UUID().uuidString)"
        defer { unlink(path) }
        // Nothing else of this process goes with it (``Spawn``): the server pg_ctl leaves behind would hold whatever
        // it inherited for the whole run — among it the socket ends Foundation's Process watches to see other
        // children exit, so a test waiting for one of those (started by another test at the same moment) hung for good.
        let pid = try Spawn.start(tool, args, stdoutPath: path, stderrPath: path)
        let status = Spawn.wait(pid)
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        guard status == 0 else {
            throw TestServerError("\((tool as NSString).lastPathComponent) \(args.joined(separator: " ")) failed: \(text)")
        }
        return text
    }
}

/// Why the test server could not be used.
public struct TestServerError: Error, CustomStringConvertible {
    /// What went wrong.
    public let description: String
    init(_ description: String) { self.description = description }
}
