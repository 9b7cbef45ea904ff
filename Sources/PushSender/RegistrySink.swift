import PushCore
import PushStore

/// The PushStore registry as the sender's delivery log and pruning target for one app.
public struct RegistrySink: DeliverySink {
    /// The registry.
    public let registry: Registry
    /// The app whose devices these are.
    public let app: String

    /// Creates a sink for `app`.
    public init(registry: Registry, app: String) {
        self.registry = registry
        self.app = app
    }

    /// Writes the batch to the delivery log and marks accepted tokens as recently successful.
    public func record(_ results: [DeliveryResult]) throws {
        let records = results.map {
            DeliveryRecord(
                app: app, apnsId: $0.apnsId, uniqueId: $0.uniqueId, token: $0.token, status: $0.status,
                reason: $0.reason?.rawValue ?? $0.error, attempts: $0.attempts,
                possiblyDuplicated: $0.possiblyDuplicated, firstAttemptMs: $0.startedAtMs, finishedMs: $0.finishedAtMs)
        }
        try registry.recordDeliveries(records)
        let accepted = results.filter(\.isAccepted)
        if let last = accepted.last {
            try registry.markSuccess(app: app, tokens: accepted.map(\.token), atMs: last.finishedAtMs)
        }
    }

    /// Prunes through the registry (410s gated on the timestamp there).
    public func prune(token: DeviceToken, reason: APNsReason, apnsTimestampMs: Int64?) throws -> Bool {
        try registry.prune(app: app, token: token, reason: reason, apnsTimestampMs: apnsTimestampMs) == .deleted
    }
}
