import Foundation
import TestSupport

/// Runs the built `pushctl` binary, as a user would.
struct CLI {
    /// What a run printed and returned.
    typealias Result = ProcessOutcome

    /// The package root.
    static var packageRoot: URL { BuiltPushctl.packageRoot }

    /// The built `pushctl` (``BuiltPushctl``).
    static var binary: URL { BuiltPushctl.url }

    /// Runs `pushctl args…` from the package root (or `cwd`) with an optional stdin and extra environment (`unset`
    /// removes variables the test process has, and `PUSHCTL_CONFIG` is never inherited); waits at most `timeout`
    /// seconds (``ProcessRunner``: off the cooperative pool).
    static func run(
        _ args: [String], stdin: String? = nil, environment: [String: String] = [:], unset: Set<String> = [],
        cwd: URL? = nil, timeout: TimeInterval = 60
    ) async throws -> Result {
        try await ProcessRunner.run(
            binary, args, stdin: stdin, environment: Self.environment(environment, unset: unset), cwd: cwd ?? packageRoot,
            timeout: timeout)
    }

    /// The test process's environment without `PUSHCTL_CONFIG` and `unset`, with `extra`.
    static func environment(_ extra: [String: String], unset: Set<String>) -> [String: String] {
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "PUSHCTL_CONFIG")
        for key in unset { env.removeValue(forKey: key) }
        for (k, v) in extra { env[k] = v }
        return env
    }

    /// A fresh temporary directory, removed when the test process exits (whether or not its test removed it
    /// first): processes a test started in the background may write into it until they end.
    static func temporaryDirectory() throws -> URL {
        URL(fileURLWithPath: try TemporaryDirectories.make("cli"))
    }
}

extension CLI {
    /// Starts `pushctl args…` in the background (output discarded).
    static func start(_ args: [String]) throws -> ChildProcess {
        try spawn(args)
    }

    /// Starts `pushctl args…` (from the package root unless `cwd` is given, without a `PUSHCTL_CONFIG` from the test's
    /// environment) with stdout and stderr appended to the files at those paths.
    static func spawn(
        _ args: [String], stdoutPath: String = "/dev/null", stderrPath: String = "/dev/null",
        environment: [String: String] = [:], unset: Set<String> = [], cwd: URL? = nil
    ) throws -> ChildProcess {
        try ChildProcess(
            binary.path, args, stdoutPath: stdoutPath, stderrPath: stderrPath,
            environment: Self.environment(environment, unset: unset), cwd: (cwd ?? packageRoot).path)
    }

    /// A `pushctl` started in the background whose output goes to files.
    struct Background {
        let process: ChildProcess
        let stdoutPath: String
        let stderrPath: String
        var isRunning: Bool { process.isRunning }
        /// Its exit status; -1 while it runs.
        var terminationStatus: Int32 { process.terminationStatus }
        var stdoutText: String { (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? "" }
        var stderrText: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }
        func interrupt() { process.interrupt() }
        func terminate() { process.terminate() }
        /// SIGTERM, a bounded wait, SIGKILL (``ChildProcess/stop(within:)``): for `defer`, where nothing can be
        /// awaited; a test waits for a process's own end with ``exited()``.
        func stop() { process.stop() }
        /// Returns once the process has exited (``ChildProcess/exited()``: no thread held meanwhile).
        func exited() async throws { try await process.exited() }
    }

    /// Starts `pushctl args…` in the background with its output in files under a new temporary directory.
    static func startCapturing(_ args: [String], environment: [String: String] = [:]) throws -> Background {
        let dir = try temporaryDirectory()
        let (outPath, errPath) = (dir.appendingPathComponent("stdout").path, dir.appendingPathComponent("stderr").path)
        let process = try spawn(args, stdoutPath: outPath, stderrPath: errPath, environment: environment)
        return Background(process: process, stdoutPath: outPath, stderrPath: errPath)
    }

    /// Waits until something accepts TCP connections on 127.0.0.1:`port`, trying every 50 ms.
    static func waitForPort(_ port: Int, seconds: Double = 60) async throws {
        do {
            try await waitUntil(deadline: .seconds(seconds), every: .milliseconds(50), "127.0.0.1:\(port) accepts") {
                guard let fd = connectLoopback(port: port) else { return false }
                close(fd)
                return true
            }
        } catch is WaitTimedOut {
            throw ProcessTimeout(command: ["waitForPort", String(port)], seconds: seconds)
        }
    }

    /// A TCP socket connected to 127.0.0.1:`port`, or nil when nothing accepts there.
    static func connectLoopback(port: Int) -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = UInt16(port).bigEndian
        let ok = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        if ok == 0 { return fd }
        close(fd)
        return nil
    }
}
