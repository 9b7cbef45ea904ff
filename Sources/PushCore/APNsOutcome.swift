/// What a provider must do with an APNs answer: ``APNsAnswerRule``'s verdict with the reason and timestamp the
/// sender acts on.
public enum APNsOutcome: Sendable, Equatable {
    /// 200: APNs accepted the notification.
    case accepted
    /// The token is dead: prune it from the registry (`timestampMs` set when the prune is gated on it).
    case tokenDead(APNsReason, timestampMs: Int64?)
    /// Never retry: the request itself is wrong (BadTopic, PayloadTooLarge, …).
    case permanent(APNsReason)
    /// Try again later, with backoff and the same apns-id.
    case retryable(APNsReason)
    /// The credentials are wrong for this endpoint: stop sending there instead of hammering APNs.
    case credentialFailure(APNsReason)

    /// Classifies an HTTP status and reason with ``APNsAnswerRule``.
    public static func classify(status: Int, reason: APNsReason?, timestampMs: Int64? = nil) -> APNsOutcome {
        APNsOutcome(APNsAnswerRule.verdict(status: status, reason: reason, timestampMs: timestampMs),
                    status: status, reason: reason, timestampMs: timestampMs)
    }

    /// The outcome of an answer already judged by ``APNsAnswerRule`` (the sender keeps the verdict for its
    /// `Retry-After`).
    public init(_ verdict: AnswerVerdict, status: Int, reason: APNsReason?, timestampMs: Int64?) {
        let reason = reason ?? .unknown("HTTP \(status)")
        switch verdict.kind {
        case .accepted: self = .accepted
        case .tokenDead: self = .tokenDead(reason, timestampMs: verdict.gatedOnTimestamp ? timestampMs : nil)
        case .permanent: self = .permanent(reason)
        case .retryable: self = .retryable(reason)
        case .credentialFailure: self = .credentialFailure(reason)
        }
    }

    /// True when the notification reached a final state (nothing left to retry).
    public var isFinal: Bool {
        if case .retryable = self { return false }
        return true
    }
}
