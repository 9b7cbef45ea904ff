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
        _ = FileManager.default.createFile(atPath: outPath, contents: nil)
        _ = FileManager.default.createFile(atPath: errPath, contents: nil)
        defer {
            try? FileManager.default.removeItem(atPath: outPath)
            try? FileManager.default.removeItem(atPath: errPath)
        }
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let environment { process.environment = environment }
        if let cwd { process.currentDirectoryURL = cwd }
        let out = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
        let err = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
        process.standardOutput = out
        process.standardError = err
        let input = Pipe()
        process.standardInput = stdin == nil ? FileHandle.nullDevice : input
        try process.run()
        if let stdin {
            // A process may exit before reading all of its input (a refused configuration exits 2 at once): its
            // status and stderr say why, so a closed pipe is not the test's error (the legacy write(_:) traps on it).
            try? input.fileHandleForWriting.write(contentsOf: Data(stdin.utf8))
            try? input.fileHandleForWriting.close()
        }
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(5_000) }
        if process.isRunning {
            process.stop()
            throw ProcessTimeout(command: [executable.lastPathComponent] + arguments, seconds: timeout)
        }
        process.waitUntilExit()
        try out.close()
        try err.close()
        return ProcessOutcome(
            status: process.terminationStatus,
            stdout: (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "")
    }
}
