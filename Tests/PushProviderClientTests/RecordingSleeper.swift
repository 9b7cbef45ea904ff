import Foundation
import PushProviderClient
import Synchronization

/// A sleeper that records the waits the retry policy asked for, and really sleeps them only when `real` is true:
/// an outage test need not spend the backoff's seconds, while the `Retry-After` test does and measures them.
final class RecordingSleeper: Sleeper {
    private let real: Bool
    private let waits = Mutex<[TimeInterval]>([])

    init(real: Bool = false) { self.real = real }

    /// The waits asked for, in order.
    var recorded: [TimeInterval] { waits.withLock { $0 } }

    func sleep(seconds: TimeInterval) async throws {
        waits.withLock { $0.append(seconds) }
        if real { try await TaskSleeper().sleep(seconds: seconds) }
    }
}
