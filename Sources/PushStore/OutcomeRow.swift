import PushCore

/// The row a broadcast holds for a device that needs action later (a dead token, a rejection, a deferral, a
/// pending device): what the store needs to know of it when an outcome replaces or removes it.
struct OutcomeRow: Sendable, Equatable {
    var kind: DeliveryOutcome.Kind
    var status: Int
    var reason: String?
    var attempts: Int
    var possiblyDuplicated: Bool
    var pruned: Bool

    /// Its key in the counters (``BroadcastCounts/reasonKey(kind:status:reason:)``).
    var countKey: String { BroadcastCounts.reasonKey(kind: kind, status: status, reason: reason) }
}
