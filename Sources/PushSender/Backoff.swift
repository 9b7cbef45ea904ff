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

/// Exponential backoff with full jitter (AWS's "full jitter"): spreads retries of many notifications.
public struct BackoffPolicy: Sendable {
    /// First retry's upper bound.
    public var baseMs: Int
    /// Largest delay.
    public var capMs: Int

    /// Creates a policy.
    public init(baseMs: Int, capMs: Int) {
        self.baseMs = baseMs
        self.capMs = capMs
    }

    /// The delay before attempt `failedAttempts + 1`, given a uniform `random` in [0, 1).
    public func delayMs(failedAttempts: Int, random: Double) -> Int {
        let shift = min(max(failedAttempts - 1, 0), 30)
        let ceiling = min(capMs, baseMs.multipliedReportingOverflow(by: 1 << shift).overflow ? capMs : baseMs << shift)
        return Int(Double(ceiling) * min(max(random, 0), 1))
    }
}
