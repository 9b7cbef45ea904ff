/// A broadcast's totals, as the store keeps them: exact counters written in the same transaction as the
/// outcomes and checkpoints they count (so they survive resumes, crashes and history retention, and are what
/// the store holds, not what a layer above intended).
public struct BroadcastCounts: Sendable, Equatable {
    /// Devices with a committed outcome: final ones plus deferred ones.
    public var done = 0
    /// 200 from APNs.
    public var accepted = 0
    /// Devices whose transient failures exhausted their attempts; the next run of the same id retries them.
    public var deferred = 0
    /// Devices whose token APNs called dead (``APNsAnswerRule``), pruned or kept because of a newer registration.
    public var tokenDead = 0
    /// Tokens the store removed from the registry.
    public var pruned = 0
    /// Notifications that needed more than one request.
    public var retried = 0
    /// Notifications that may have reached the device twice.
    public var possiblyDuplicated = 0
    /// Outcomes other than accepted, by reason (see ``reasonKey(kind:status:reason:)``); deferred ones included.
    public var notAcceptedByReason: [String: Int] = [:]

    /// Creates empty counts.
    public init() {}

    /// Outcomes other than accepted.
    public var notAccepted: Int { done - accepted }

    /// Final outcomes that are neither accepted nor a dead token: the notifications APNs refused for good. A
    /// broadcast with any fails (a dead token does not: removing it is what the answer asks for).
    public var rejected: Int { done - accepted - tokenDead - deferred }

    /// The key an outcome other than accepted is counted under in ``notAcceptedByReason``: its bounded reason
    /// (``APNsReason/label(status:reason:)`` — Apple's reason, `transportError` or `unknown`, never free text),
    /// or its kind when it has none. Bounded like `/metrics`' labels, so the counters stay a few rows per job.
    public static func reasonKey(kind: DeliveryOutcome.Kind, status: Int, reason: String?) -> String {
        let label = APNsReason.label(status: status, reason: reason)
        return label.isEmpty ? kind.rawValue : label
    }

    /// ``reasonKey(kind:status:reason:)`` as an SQL expression over the named columns (SQLite and PostgreSQL
    /// alike), for migrations that count rows stored before the counters existed.
    public static func reasonKeySQL(kind: String, status: String, reason: String) -> String {
        let known = (APNsReason.known.map(\.rawValue) + APNsReason.otherServicesReasons.sorted()).map { "'\($0)'" }.joined(separator: ", ")
        return """
            CASE WHEN \(reason) IS NULL OR \(reason) = '' THEN \(kind) WHEN \(reason) IN (\(known)) THEN \(reason) \
            WHEN \(status) = 0 THEN '\(APNsReason.transportErrorLabel)' ELSE '\(APNsReason.unknownLabel)' END
            """
    }

    /// Adds one counter row: `devices` outcomes of `kind` under `reason` (its key), of which `retried`,
    /// `possiblyDuplicated` and `pruned` were so.
    public mutating func add(kind: DeliveryOutcome.Kind, reason: String, devices: Int, retried: Int, possiblyDuplicated: Int, pruned: Int) {
        guard kind != .pending else { return }
        done += devices
        self.retried += retried
        self.possiblyDuplicated += possiblyDuplicated
        self.pruned += pruned
        switch kind {
        case .accepted: accepted += devices
        case .deferred:
            deferred += devices
            notAcceptedByReason[reason, default: 0] += devices
        case .tokenDead:
            tokenDead += devices
            notAcceptedByReason[reason, default: 0] += devices
        default: notAcceptedByReason[reason, default: 0] += devices
        }
        if notAcceptedByReason[reason] == 0 { notAcceptedByReason[reason] = nil }
    }
}
