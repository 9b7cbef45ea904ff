import Foundation
import Synchronization

/// Turns SIGHUP (`systemctl reload`, `kill -HUP`) into calls of a reload, one at a time and in order: SIGHUPs that
/// land while a reload runs are served by one more reload after it, which reads the file as it is then.
///
/// A plain handler counting into an atomic, looked at every ``pollInterval`` (as the simulator waits for SIGTERM):
/// a dispatch signal source needs the signal blocked in every thread (NIO's included), and a SIGHUP that lands
/// on a thread that does not block it would take its default action and end the process.
final class ReloadSignal: Sendable {
    /// How often the count is looked at: how late at most a reload starts.
    static let pollInterval = Duration.milliseconds(100)

    private let task: Task<Void, Never>

    /// Installs the counting handler, so a SIGHUP while the process starts no longer ends it (SIGHUP's default):
    /// call it first thing in a long-running command. A SIGHUP counted before ``init(_:)`` causes one reload then.
    static func ignoreUntilReady() {
        _ = signal(SIGHUP) { _ in _ = HangupCount.value.wrappingAdd(1, ordering: .relaxed) }
    }

    /// Calls `reload` after each SIGHUP until ``cancel()``.
    init(_ reload: @escaping @Sendable () async -> Void) {
        Self.ignoreUntilReady()
        task = Task {
            var served = 0
            while !Task.isCancelled {
                let count = HangupCount.value.load(ordering: .relaxed)
                if count != served {
                    served = count
                    await reload()
                    continue
                }
                try? await Task.sleep(for: Self.pollInterval)
            }
        }
    }

    func cancel() { task.cancel() }
}

/// SIGHUPs received by this process.
private enum HangupCount {
    static let value = Atomic<Int>(0)
}
