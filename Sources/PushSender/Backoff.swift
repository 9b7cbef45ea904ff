#if canImport(Glibc)
import Glibc
#endif

/// Wall-clock time for delivery records, injectable for tests.
public protocol SenderClock: Sendable {
    /// Milliseconds since the Unix epoch.
    func nowMs() -> Int64
}

/// The system's real-time clock.
public struct SystemClock: SenderClock {
    /// Creates the clock.
    public init() {}
    /// Milliseconds since the Unix epoch.
    public func nowMs() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }
}

/// Waits before a retry; tests pass one that records the delay and returns at once.
public protocol Sleeper: Sendable {
    /// Suspends for `milliseconds`.
    func sleep(milliseconds: Int) async
}

/// Sleeps with `Task.sleep`.
public struct TaskSleeper: Sleeper {
    /// Creates the sleeper.
    public init() {}
    /// Suspends for `milliseconds` (returns early if the task is cancelled).
    public func sleep(milliseconds: Int) async {
        try? await Task.sleep(nanoseconds: UInt64(max(0, milliseconds)) * 1_000_000)
    }
}
