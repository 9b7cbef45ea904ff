/// Which outcomes become rows of the delivery log (`deliveryLog`, `apps.ID.deliveryLog`).
///
/// The log is history only: whatever the scope, every outcome is counted (`pushctl`'s summaries, a job's
/// counts, `/metrics`), and every outcome that needs action later — a dead token, a rejection, a deferral —
/// is also kept as its broadcast's or send job's per-device row. What the scope decides is whether an
/// *accepted* notification leaves a row of its own (and sets its device's last success): per device, that is
/// most of a large broadcast's database writes.
public enum DeliveryLogScope: String, Sendable, CaseIterable {
    /// Every final or deferred outcome, accepted ones of broadcasts included: a per-device history of every
    /// notification (support look-ups), at the price of a row and three index entries per accepted device.
    case all
    /// Dead tokens, rejections and deferrals — and accepted notifications sent *directly*: to listed tokens
    /// (`pushctl send --token/--tokens-file`, a send job or Live Activity job with `tokens`). Those are
    /// addressed to particular devices, already store a row per token, and are what support looks up; an
    /// accepted notification of a broadcast to all devices or a channel writes nothing per device. The default.
    case failures

    /// The scope when the configuration names none.
    public static let `default` = DeliveryLogScope.failures

    /// True when a send is *direct* — addressed to particular devices — the one rule for the CLI and the API: listed
    /// tokens, or an audience naming one user (`user = U`, with or without more clauses: that user's devices, which
    /// support looks up by user). An audience of segments only (`plan = pro`) is a broadcast to many, as `all` is.
    public static func isDirect(listedTokens: Bool, audience: Audience?) -> Bool {
        listedTokens || audience?.user != nil
    }

    /// True when an outcome of `kind` is written to the log, `direct` saying whether the notification was sent
    /// to listed tokens (see ``failures``). A pending marker never is.
    public func logs(_ kind: DeliveryOutcome.Kind, direct: Bool) -> Bool {
        switch kind {
        case .pending: false
        case .accepted: self == .all || direct
        case .tokenDead, .rejected, .deferred: true
        }
    }
}
