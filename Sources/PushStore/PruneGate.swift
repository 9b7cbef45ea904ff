import PushCore

/// The store's side of the prune rule, once for both backends. Which answers remove a device, and which removals
/// wait on the service's timestamp, is the verdict the request carries, decided by its service's rule (never a list
/// here, and no service's rule either): a gated removal is skipped when the device registered again at or after
/// the timestamp (Apple: keep the token if the device registered it again later; with no timestamp it goes); the
/// others always remove.
enum PruneGate {
    /// True for the answers that remove a token.
    static func prunes(_ request: PruneRequest) -> Bool { request.verdict.prunes }

    /// Refuses an answer that does not remove a token (`.invalidInput`): nothing is written.
    static func check(_ request: PruneRequest) throws(StoreError) {
        guard prunes(request) else {
            throw StoreError(.invalidInput, "the answer \(request.status) \(request.reason) does not prune a device")
        }
    }

    /// True when the token stays: a gated removal whose timestamp is not after the token's last registration.
    static func keeps(_ request: PruneRequest, lastRegisteredMs: Int64) -> Bool {
        request.verdict.gatedOnTimestamp && request.apnsTimestampMs.map { lastRegisteredMs >= $0 } == true
    }

    /// The prune counters' reason: the request's bounded one (the prune log keeps the reason as the service gave it).
    static func counterReason(_ request: PruneRequest) -> String { request.counterReason }

    /// The prune log's `action` (and its counter's) for a verdict.
    static func action(keep: Bool) -> String { keep ? "skipped" : "deleted" }

    /// What the caller is told.
    static func outcome(keep: Bool) -> PruneOutcome { keep ? .skippedNewerRegistration : .deleted }
}
