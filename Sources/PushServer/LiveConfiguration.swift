import PushCore
import Synchronization

/// The part of the server's configuration a reload (SIGHUP) replaces, as one snapshot: request handlers read it
/// per request, so a request sees either the old settings or the new ones, and one in flight when the reload
/// lands finishes on what it started with. See ``ConfigurationReload`` for what may change live.
final class LiveConfiguration: Sendable {
    /// One consistent set of settings.
    struct Snapshot: Sendable {
        var configuration: PushConfiguration
        var keys: APIKeys
        var credentials: [String: PushServer.CredentialStatus]
        var userSecrets: [String: [UInt8]]
        /// Each app's Web Push, FCM, HMS and UnifiedPush health (``ServiceHealth``).
        var services: [String: [ServiceHealth]] = [:]
    }

    private let current: Mutex<Snapshot>

    init(_ snapshot: Snapshot) { current = Mutex(snapshot) }

    /// The settings now (a copy: later reloads do not change it).
    var snapshot: Snapshot { current.withLock { $0 } }

    /// Replaces the settings for every request that starts from now on.
    func replace(with snapshot: Snapshot) { current.withLock { $0 = snapshot } }
}
