/// What ``RegistryStore/prune(app:token:reason:apnsTimestampMs:)`` did.
public enum PruneOutcome: Sendable, Equatable {
    /// The token was removed.
    case deleted
    /// Kept: it was registered at or after APNs' 410 timestamp, so the device registered it again.
    case skippedNewerRegistration
    /// The token was not registered.
    case notFound
}
