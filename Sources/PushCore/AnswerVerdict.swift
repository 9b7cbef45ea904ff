/// What a push service's answer to one notification means, in terms every service shares: the kind, whether
/// the token is removed from the registry (and whether that removal waits on the service's timestamp), and how
/// long the service asked us to wait before trying again. Each service maps its own answers onto it with one
/// pure function (a ``PushAnswerRule``: APNs' is ``APNsAnswerRule``), so the sender, the store's prune gate, the
/// summaries and the delivery history's classification all read the same verdict.
public struct AnswerVerdict: Sendable, Hashable {
    /// The kinds of answer every push service gives.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// The service took the notification. Final.
        case accepted
        /// The token is dead: remove it from the registry. Final.
        case tokenDead
        /// Never retry: the request itself is wrong. Final.
        case permanent
        /// Try again later, with backoff (and at least ``AnswerVerdict/retryAfterMs`` when the service said).
        case retryable
        /// The credentials are wrong for this endpoint: stop sending there.
        case credentialFailure
    }

    /// The kind.
    public var kind: Kind
    /// For ``Kind/tokenDead``: the removal is skipped when the device registered the token again at or after the
    /// service's timestamp (APNs' 410). False for every other kind.
    public var gatedOnTimestamp: Bool
    /// For ``Kind/retryable``: the service's `Retry-After`, in ms, when it gave one (a floor for the backoff).
    public var retryAfterMs: Int64?

    /// Creates a verdict; `gatedOnTimestamp` and `retryAfterMs` only count for the kinds they belong to.
    public init(_ kind: Kind, gatedOnTimestamp: Bool = false, retryAfterMs: Int64? = nil) {
        self.kind = kind
        self.gatedOnTimestamp = kind == .tokenDead && gatedOnTimestamp
        self.retryAfterMs = kind == .retryable ? retryAfterMs : nil
    }

    /// True when the answer removes the token from the registry.
    public var prunes: Bool { kind == .tokenDead }

    /// True when the notification reached a final state (nothing left to retry).
    public var isFinal: Bool { kind != .retryable }

    /// True when the answer does not fail a broadcast: accepted, or a dead token (removing it is the point).
    public var settlesCleanly: Bool { kind == .accepted || kind == .tokenDead }
}

/// One push service's answer rule: a pure function from the service's answer to an ``AnswerVerdict``. APNs'
/// is ``APNsAnswerRule``; a second service (Web Push, FCM) adds its own conforming type and maps its answers
/// onto the same kinds, so nothing downstream of the verdict changes.
public protocol PushAnswerRule {
    /// The service's answer as it arrives (status, reason, timestamps, headers the rule reads).
    associatedtype Answer
    /// The verdict for one answer.
    static func verdict(for answer: Answer) -> AnswerVerdict
}
