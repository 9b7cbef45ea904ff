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
