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
