import Foundation
import PushCore
import PushStore
import TestSupport

/// A fresh temporary directory per test (tests run in parallel), removed when the test process exits.
func makeTempDirectory() -> String {
    try! TemporaryDirectories.make("pushstore")
}

/// A clock the test moves by hand.
final class ManualClock: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Int64

    init(_ start: Int64 = 1_700_000_000_000) { value = start }

    var now: Int64 {
        lock.lock()
        defer { lock.unlock() }
        return value
    }

    func advance(_ ms: Int64) {
        lock.lock()
        value += ms
        lock.unlock()
    }

    var function: @Sendable () -> Int64 { { self.now } }
}

/// Writes a config naming one app, `example`, with its database in `directory`.
func writeConfig(in directory: String) -> (config: String, database: String) {
    let config = directory + "/pushctl.json"
    let json = """
        { "database": "data/registry.sqlite", "simulator": {"certificates": "certs"},
          "apps": { "example": { "topic": "com.example.app", "endpoint": "simulator",
                                 "auth": {"p12": "client.p12", "passwordFile": "client.p12.password"} } } }
        """
    _ = FileManager.default.createFile(atPath: config, contents: Data(json.utf8))
    return (config, directory + "/data/registry.sqlite")
}

/// The result of one pushctl run.
typealias RunResult = ProcessOutcome

/// A pushctl running in the background with its output going to files (the tests that must act while it runs).
final class PushctlProcess: Sendable {
    let process: ChildProcess
    private let outPath: String
    private let errPath: String

    init(_ arguments: [String], config: String) throws {
        let dir = makeTempDirectory()
        outPath = dir + "/out"
        errPath = dir + "/err"
        var environment = ProcessInfo.processInfo.environment
        environment["PUSHCTL_CONFIG"] = config
        process = try ChildProcess(BuiltPushctl.path, arguments, stdoutPath: outPath, stderrPath: errPath, environment: environment)
    }

    /// Waits up to `timeout` seconds (then kills the process and reports status -1). Polls between sleeps, not
    /// `usleep`: suites run in parallel on the cooperative pool (one thread per core), and a blocked thread there
    /// starves timing-sensitive tests in other suites.
    func wait(timeout: Double = 30) async -> RunResult {
        let status: Int32 = await process.exited(within: timeout) ? process.terminationStatus : -1
        process.kill()
        let out = (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
        let err = (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? ""
        return RunResult(status: status, stdout: out, stderr: err)
    }
}

/// Runs pushctl to completion with `config` as `PUSHCTL_CONFIG`.
func pushctl(_ arguments: [String], config: String, stdin: String? = nil, timeout: Double = 30) async throws -> RunResult {
    var environment = ProcessInfo.processInfo.environment
    environment["PUSHCTL_CONFIG"] = config
    return try await ProcessRunner.run(BuiltPushctl.url, arguments, stdin: stdin, environment: environment, timeout: timeout)
}
