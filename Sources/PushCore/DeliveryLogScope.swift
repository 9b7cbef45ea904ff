/// Which outcomes become rows of the delivery log (`deliveryLog`, `apps.ID.deliveryLog`).
///
/// The log is history only: whatever the scope, every outcome is still counted (`pushctl`'s summaries,
/// `/metrics`), a broadcast's or send job's per-device outcomes are still stored (its counts, and what a
/// resumed run must not send again), and an accepted notification still sets the device's last success.
public enum DeliveryLogScope: String, Sendable, CaseIterable {
    /// Every final or deferred outcome (the default).
    case all
    /// Every outcome except `accepted`: dead tokens, rejections and deferrals. For large broadcasts this
    /// drops most of the log's rows and their index entries (each write costs CPU and disk).
    case failures

    /// True when an outcome of `kind` is written to the log. A pending marker never is.
    public func logs(_ kind: DeliveryOutcome.Kind) -> Bool {
        switch kind {
        case .pending: false
        case .accepted: self == .all
        case .tokenDead, .rejected, .deferred: true
        }
    }
}
