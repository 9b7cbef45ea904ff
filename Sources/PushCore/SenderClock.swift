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
