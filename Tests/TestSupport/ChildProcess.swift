import Foundation
import Synchronization

/// A test's long-running child (a server, a worker, a simulator, a proxy), started with ``Spawn`` instead of
/// Foundation's `Process`, for three reasons measured in CI:
/// - `Process` sees a child's end only once every process holding its status socket has closed it, so an exited child
///   could look running for as long as another test's server lived;
/// - its `terminationStatus` traps on a process it thinks is running, which took the whole test process down;
/// - its children outlive a crashed test process (five simulators were left running once).
/// Here the end is read from `waitpid`, a status read too early is -1 (an expectation fails, nothing traps), and the
/// child is killed when the test process dies.
public final class ChildProcess: Sendable {
    /// The child's pid (valid until it has been reaped; signals are sent only before that).
    public let processIdentifier: pid_t
    /// The child's exit status once reaped (``Spawn/status(_:)``); guards against signalling a reused pid.
    private let ended = Mutex<Int32?>(nil)

    /// Starts `executable arguments…` with stdin from `input`, stdout and stderr appended to the files at the paths
    /// given (created if missing; `/dev/null` by default; one path for both shares the file), `environment` (nil: this
    /// process's) and, when given, `cwd`.
    public init(
        _ executable: String, _ arguments: [String], input: Spawn.Input = .none, stdoutPath: String = "/dev/null",
        stderrPath: String = "/dev/null", environment: [String: String]? = nil, cwd: String? = nil
    ) throws {
        processIdentifier = try Spawn.start(
            executable, arguments, input: input, stdoutPath: stdoutPath, stderrPath: stderrPath, environment: environment,
            cwd: cwd, append: true)
    }

    /// Whether the child has not ended yet (reaps it once it has).
    public var isRunning: Bool { status == nil }

    /// How it ended (``Spawn/status(_:)``); -1 while it runs, where Foundation's `Process` would trap.
    public var terminationStatus: Int32 { status ?? -1 }

    /// Its status once it has ended, nil while it runs.
    public var status: Int32? {
        ended.withLock { ended in
            if ended == nil { ended = Spawn.poll(processIdentifier) }
            return ended
        }
    }

    /// Sends `signal` unless the child has been reaped (its pid may then be another process's).
    public func send(_ signal: Int32) {
        ended.withLock { ended in
            if ended == nil { Glibc.kill(processIdentifier, signal) }
        }
    }

    /// SIGINT.
    public func interrupt() { send(SIGINT) }
    /// SIGTERM.
    public func terminate() { send(SIGTERM) }

    /// Returns once the child has ended, checking every 20 ms between sleeps (no thread held meanwhile). A cancelled
    /// wait (the test's time limit) throws `CancellationError`.
    public func exited() async throws {
        while isRunning { try await Task.sleep(for: .milliseconds(20)) }
    }

    /// Whether the child ended within `seconds`, waiting as ``exited()`` does.
    public func exited(within seconds: Double) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while isRunning && ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(20)) }
        return !isRunning
    }

    /// SIGTERM, at most `seconds` for the child to end, then SIGKILL, and reaped: blocking (for `defer`, where nothing
    /// can be awaited; a test waits for a child's own end with ``exited()``).
    public func stop(within seconds: Double = 10) {
        guard isRunning else { return }
        terminate()
        let deadline = Date().addingTimeInterval(seconds)
        while isRunning && Date() < deadline { usleep(10_000) }
        kill()
    }

    /// SIGKILL, and reaped.
    public func kill() {
        send(SIGKILL)
        while isRunning { usleep(5_000) }
    }

    /// A child nothing refers to any more cannot be stopped by its test: it goes now rather than outliving the test.
    deinit {
        if ended.withLock({ $0 }) == nil, Spawn.poll(processIdentifier) == nil {
            Glibc.kill(processIdentifier, SIGKILL)
            _ = Spawn.wait(processIdentifier)
        }
    }
}
