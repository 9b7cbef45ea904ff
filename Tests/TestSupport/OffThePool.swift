import Dispatch
import Foundation

/// Runs blocking work on a GCD thread and awaits it — the one way test code hands blocking work off. Swift Testing
/// runs every test, synchronous ones too, on the cooperative pool: one thread per core, two on the CI box. A test that
/// blocks one of them (waiting for a child process, `psql`, a sleep) for seconds leaves every other test of the
/// process one thread, and tests that time a child process or answer a server within milliseconds then fail for a
/// reason that is not theirs (CI 2026-11-28: a `jobs cancel` that landed after its 15 s broadcast had ended; read
/// pacing never engaged because 30 round trips took 110 s).
public func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { (c: CheckedContinuation<T, Error>) in
        DispatchQueue.global().async { c.resume(with: Result { try body() }) }
    }
}

extension Process {
    /// Returns once Foundation has seen the process exit (its status is then readable), checking every 20 ms between
    /// sleeps: ``waitUntilExit()`` blocks its thread for as long as the child runs (see ``offThePool(_:)`` for why an
    /// async test must not). A cancelled wait (the test's time limit) throws `CancellationError`: returning would let
    /// the caller read `terminationStatus` of a running process, which traps.
    public func exited() async throws {
        while isRunning { try await Task.sleep(for: .milliseconds(20)) }
    }

    /// SIGTERM, then at most `seconds` for the process to end, then SIGKILL: blocking, for `defer` (where nothing can
    /// be awaited). Bounded, and "ended" is read from /proc, because Foundation (swift-corelibs-foundation, 6.3.1) sees
    /// a child exit only once every process holding its status socket closed it — a child that another test started
    /// at the same moment inherits that socket, and the exited child stays "running" (a zombie) until that one ends.
    /// Two unbounded waits of that kind once held both threads of the cooperative pool, and the run hung.
    public func stop(within seconds: Double = 10) {
        guard isRunning else { return }
        terminate()
        let deadline = Date().addingTimeInterval(seconds)
        while isRunning && !Self.hasEnded(processIdentifier) && Date() < deadline { usleep(20_000) }
        if isRunning && !Self.hasEnded(processIdentifier) { kill(processIdentifier, SIGKILL) }
    }

    /// Whether the process `pid` has exited, reaped or not: /proc has no entry for it, or its state is zombie.
    public static func hasEnded(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return true }
        let state = stat[stat.index(after: close)...].drop { $0 == " " }.first
        return state == "Z" || state == "X"
    }
}
