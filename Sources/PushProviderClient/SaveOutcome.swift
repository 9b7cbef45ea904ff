/// What a `save()` did. A change the server could not be reached for is not an error the app must handle — it is
/// kept on disk and sent by a later `save()` — so it is an outcome, `pending`, with the reason for logging; only a
/// refusal the app must act on (a 4xx) is thrown.
public enum SaveOutcome: Sendable, Equatable {
    /// Nothing had changed since the server's last acknowledgement: no request was made.
    case upToDate
    /// Every pending change was sent and acknowledged.
    case sent
    /// Some changes wait on disk for a later `save()`: the server was unreachable or asked for a pause
    /// (`unreachable`, `rate_limited`, `database_unavailable`, …), or there is no device token yet (`no_token`).
    case pending(PushProviderClientError)
}
