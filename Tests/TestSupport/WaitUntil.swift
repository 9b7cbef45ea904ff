import Foundation

/// A wait that ran out: what was awaited and for how long.
public struct WaitTimedOut: Error, CustomStringConvertible {
    /// What the test was waiting for.
    public let what: String
    /// The deadline it gave.
    public let deadline: Duration
    public var description: String { "timed out after \(deadline) waiting until \(what)" }
}

/// Waits for an event instead of sleeping for a guess: checks `condition` every `every` until it holds, and throws
/// ``WaitTimedOut`` (naming `what`) once `deadline` has passed without it. A test that sleeps "long enough" passes
/// or fails with the machine's load; one that waits on the event is as fast as the event and fails only when it
/// never comes.
public func waitUntil(
    deadline: Duration = .seconds(30), every: Duration = .milliseconds(20), _ what: String,
    _ condition: () async throws -> Bool
) async throws {
    let clock = ContinuousClock()
    let end = clock.now + deadline
    while true {
        if try await condition() { return }
        guard clock.now < end else { throw WaitTimedOut(what: what, deadline: deadline) }
        try await Task.sleep(for: every)
    }
}
