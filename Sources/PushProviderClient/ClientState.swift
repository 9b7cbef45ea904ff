import Foundation

/// Everything the client keeps between launches, in one file written atomically: the installation id (made once),
/// what the server last acknowledged, what the app wants, and the Live Activity outbox. One file, one atomic
/// rename: a kill at any moment leaves either the state before a change or the state after it, never half of each.
public struct ClientState: Sendable, Equatable, Codable {
    /// The format of this file (a newer one is refused rather than misread).
    public var version: Int
    /// The installation id, made once.
    public var installationId: String
    /// What the server acknowledged last (nil: nothing yet).
    public var acknowledged: InstallationFields?
    /// What the app wants the server to have (as of its last `save()`).
    public var desired: InstallationFields
    /// Live Activity calls not yet acknowledged, in order.
    public var outbox: [LiveActivityChange]
    /// No request before this time: the server asked for a pause longer than a `save()` waits (`Retry-After`).
    public var notBefore: Date?

    /// The current format.
    public static let currentVersion = 1

    /// A fresh state for `installationId`.
    public init(installationId: String) {
        self.version = Self.currentVersion
        self.installationId = installationId
        self.acknowledged = nil
        self.desired = InstallationFields(installation: installationId)
        self.outbox = []
        self.notBefore = nil
    }
}
