import Foundation

/// What a finished process printed and returned.
public struct ProcessOutcome: Sendable {
    /// The exit status (the signal number for a process killed by one).
    public let status: Int32
    /// Everything it wrote to stdout.
    public let stdout: String
    /// Everything it wrote to stderr.
    public let stderr: String

    /// Creates one.
    public init(status: Int32, stdout: String, stderr: String) {
        self.status = status
        self.stdout = stdout
        self.stderr = stderr
    }
}

/// A process that outlived its test's time limit (it was killed).
public struct ProcessTimeout: Error, CustomStringConvertible {
    /// The command.
    public let command: [String]
    /// The limit.
    public let seconds: TimeInterval

    /// Creates one.
    public init(command: [String], seconds: TimeInterval) {
        self.command = command
        self.seconds = seconds
    }

    public var description: String { "\(command.joined(separator: " ")) did not finish within \(Int(seconds)) s (killed)" }
}

/// Runs a program to completion, one way for every test target: output to files (a chatty child never blocks
/// on a full pipe), stdin from a string or nothing, killed past its time limit.
public enum ProcessRunner {
    /// Runs `executable args…` and waits for it off the cooperative pool (``offThePool(_:)``). `environment` replaces
    /// the test process's environment when given.
    public static func run(
        _ executable: URL, _ arguments: [String], stdin: String? = nil, environment: [String: String]? = nil,
        cwd: URL? = nil, timeout: TimeInterval = 60
    ) async throws -> ProcessOutcome {
        try await offThePool {
            try runBlocking(executable, arguments, stdin: stdin, environment: environment, cwd: cwd, timeout: timeout)
        }
    }

    /// ``run(_:_:stdin:environment:cwd:timeout:)`` on the calling thread (synchronous tests).
    @available(*, noasync, message: "blocks the calling thread: use run(_:_:stdin:environment:cwd:timeout:)")
    public static func runBlocking(
        _ executable: URL, _ arguments: [String], stdin: String? = nil, environment: [String: String]? = nil,
        cwd: URL? = nil, timeout: TimeInterval = 60
    ) throws -> ProcessOutcome {
        let scratch = NSTemporaryDirectory() + "pushprovider-proc-\(UUID().uuidString)"
        let (outPath, errPath) = (scratch + ".out", scratch + ".err")
        defer {
            try? FileManager.default.removeItem(atPath: outPath)
            try? FileManager.default.removeItem(atPath: errPath)
        }
        // Started as a ``ChildProcess``, not with Foundation's Process: a run another test's child holds open can
        // neither hang nor look unfinished (see ``Spawn``).
        var input = Spawn.Input.none
        // stdin is a socket pair made close-on-exec in one step (no child another thread starts meanwhile inherits
        // our end and keeps the child from seeing its input end), written with MSG_NOSIGNAL (no SIGPIPE).
        var pipeEnds: [Int32] = [-1, -1]
        if stdin != nil {
            guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pipeEnds) == 0 else {
                throw SpawnError("socketpair failed: errno \(errno)")
            }
            input = .descriptor(pipeEnds[0])
        }
        let child: ChildProcess
        do {
            child = try ChildProcess(
                executable.path, arguments, input: input, stdoutPath: outPath, stderrPath: errPath, environment: environment,
                cwd: cwd?.path)
        } catch {
            if stdin != nil { close(pipeEnds[0]); close(pipeEnds[1]) }
            throw error
        }
        if let stdin {
            close(pipeEnds[0])
            // A process may exit before reading all of its input (a refused configuration exits 2 at once): its status
            // and stderr say why, so a closed socket (EPIPE) is not the test's error.
            Array(stdin.utf8).withUnsafeBytes { bytes in
                var offset = 0
                while offset < bytes.count {
                    let n = send(pipeEnds[1], bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
                    if n > 0 { offset += n } else if n < 0 && errno == EINTR { continue } else { break }
                }
            }
            close(pipeEnds[1])
        }
        let deadline = Date().addingTimeInterval(timeout)
        var status = child.status
        while status == nil && Date() < deadline {
            usleep(5_000)
            status = child.status
        }
        guard let status else {
            child.stop(within: 5)  // SIGTERM, a few seconds to end, SIGKILL; reaped either way
            throw ProcessTimeout(command: [executable.lastPathComponent] + arguments, seconds: timeout)
        }
        return ProcessOutcome(
            status: status,
            stdout: (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "")
    }
}
