import PushCore

/// One row of the prune log.
public struct PruneLogEntry: Sendable, Equatable {
    /// The app id.
    public var app: String
    /// The token.
    public var token: DeviceToken
    /// The service's own reason, as it gave it: APNs' (`Unregistered`, …), a Web Push service's status (`404`,
    /// `410`), FCM's error code (`UNREGISTERED`, `SENDER_ID_MISMATCH`, …).
    public var reason: String
    /// `deleted` or `skippedNewerRegistration` (never `notFound`: nothing is logged then).
    public var outcome: PruneOutcome
    /// APNs' `timestamp` for a 410, if it sent one.
    public var apnsTimestampMs: Int64?
    /// The token's last-registered time when it was pruned or kept.
    public var lastRegisteredMs: Int64?
    /// When the prune ran.
    public var atMs: Int64
}
