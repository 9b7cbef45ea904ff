import PushCore

/// One row of the prune log.
public struct PruneLogEntry: Sendable, Equatable {
    /// The app id.
    public var app: String
    /// The token.
    public var token: DeviceToken
    /// APNs' reason.
    public var reason: APNsReason
    /// `deleted` or `skippedNewerRegistration` (never `notFound`: nothing is logged then).
    public var outcome: PruneOutcome
    /// APNs' `timestamp` for a 410, if it sent one.
    public var apnsTimestampMs: Int64?
    /// The token's last-registered time when it was pruned or kept.
    public var lastRegisteredMs: Int64?
    /// When the prune ran.
    public var atMs: Int64
}
