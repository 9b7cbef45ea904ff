import PushCore

/// The store's side of the prune rule, once for both backends. Which answers remove a token, and which removals
/// wait on APNs' timestamp, is ``APNsAnswerRule``'s verdict (never a list here): a removal the rule gates is
/// skipped when the device registered the token again at or after APNs' timestamp (Apple: keep the token if the
/// device registered it again later; with no timestamp it goes); the others always remove.
enum PruneGate {
    /// True for the answers that remove a token.
    static func prunes(_ request: PruneRequest) -> Bool { request.verdict.prunes }

    /// Refuses an answer that does not remove a token (`.invalidInput`): nothing is written.
    static func check(_ request: PruneRequest) throws(StoreError) {
        guard prunes(request) else {
            throw StoreError(.invalidInput, "APNs answer \(request.status) \(request.reason.rawValue) does not prune a token")
        }
    }

    /// True when the token stays: a gated removal whose timestamp is not after the token's last registration.
    static func keeps(_ request: PruneRequest, lastRegisteredMs: Int64) -> Bool {
        request.verdict.gatedOnTimestamp && request.apnsTimestampMs.map { lastRegisteredMs >= $0 } == true
    }

    /// The prune counters' reason: bounded like `/metrics`' labels (``APNsReason/label(status:reason:)``), so a
    /// reason this version does not know counts as `unknown` (the prune log keeps the reason as APNs sent it).
    static func counterReason(_ request: PruneRequest) -> String {
        APNsReason.label(status: request.status, reason: request.reason.rawValue)
    }

    /// The prune log's `action` (and its counter's) for a verdict.
    static func action(keep: Bool) -> String { keep ? "skipped" : "deleted" }

    /// What the caller is told.
    static func outcome(keep: Bool) -> PruneOutcome { keep ? .skippedNewerRegistration : .deleted }
}
