import PushCore

/// The prune rule, once for both backends: which APNs reasons remove a token, and when a removal is skipped
/// because the device registered the token again after APNs' verdict. `Unregistered` / `ExpiredToken` (410) are
/// gated on APNs' timestamp (Apple: keep the token if the device registered it again later; with no timestamp it
/// goes); `BadDeviceToken` and `DeviceTokenNotForTopic` always remove; other reasons say nothing about the token.
enum PruneGate {
    /// True for the reasons that remove a token.
    static func prunes(_ reason: APNsReason) -> Bool {
        switch reason {
        case .unregistered, .expiredToken, .badDeviceToken, .deviceTokenNotForTopic: true
        default: false
        }
    }

    /// Refuses a reason that does not remove a token (`.invalidInput`): nothing is written.
    static func check(_ reason: APNsReason) throws(StoreError) {
        guard prunes(reason) else { throw StoreError(.invalidInput, "APNs reason \(reason.rawValue) does not prune a token") }
    }

    /// True when the token stays: a gated reason whose timestamp is not after the token's last registration.
    static func keeps(reason: APNsReason, lastRegisteredMs: Int64, apnsTimestampMs: Int64?) -> Bool {
        let gated = reason == .unregistered || reason == .expiredToken
        return gated && apnsTimestampMs.map { lastRegisteredMs >= $0 } == true
    }

    /// The prune log's `action` (and its counter's) for a verdict.
    static func action(keep: Bool) -> String { keep ? "skipped" : "deleted" }

    /// What the caller is told.
    static func outcome(keep: Bool) -> PruneOutcome { keep ? .skippedNewerRegistration : .deleted }
}
