import Foundation

/// How the client waits between attempts. Passed in so that a test can see (and skip) the waits the retry policy
/// asks for, while production code really sleeps.
public protocol Sleeper: Sendable {
    /// Waits `seconds` (or throws `CancellationError` when the task is cancelled).
    func sleep(seconds: TimeInterval) async throws
}

/// Sleeps for real with `Task.sleep` (cancellable; `nanoseconds` rather than `Duration`, which iOS 15 lacks).
public struct TaskSleeper: Sleeper {
    /// Creates one.
    public init() {}

    public func sleep(seconds: TimeInterval) async throws {
        guard seconds > 0 else { return }
        try await Task.sleep(nanoseconds: UInt64(seconds * 1_000_000_000))
    }
}
