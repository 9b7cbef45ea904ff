import PushCore
import Synchronization

/// The configuration a long-running command (`serve`, `worker`) runs with: what its last reload applied.
final class RunningConfiguration: Sendable {
    private let current: Mutex<PushConfiguration>

    init(_ configuration: PushConfiguration) { current = Mutex(configuration) }

    /// The configuration now.
    var value: PushConfiguration { current.withLock { $0 } }

    /// Replaces it (a reload).
    func replace(with configuration: PushConfiguration) { current.withLock { $0 = configuration } }
}
