/// Web Push's answer rule (RFC 8030 §5, §6, §8 and the push services' documented answers): the one place that
/// says which push-service answers remove a subscription, which are retried, which stop an origin.
///
/// - 201 Created (RFC 8030), and 200/202 that some services send: accepted.
/// - 404 Not Found and 410 Gone: the subscription has expired or was removed → pruned. Unlike APNs' 410, Web
///   Push gives no timestamp, so the removal is not gated on one.
/// - 400 (malformed request: bad headers, bad encryption) and 413 (payload too large): permanent.
/// - 401 and 403: the VAPID credential was refused for this push service's origin (Apple answers 403
///   BadJwtToken to a wrong `sub`, `aud` or signature): a credential failure.
/// - 429 and 5xx: retried, no sooner than `Retry-After` when the service sends one.
/// - Any other status: permanent (nothing says retrying would help).
public enum WebPushAnswerRule: PushAnswerRule {
    /// One push service's answer.
    public struct Answer: Sendable, Equatable {
        /// The HTTP status.
        public var status: Int
        /// The `Retry-After` header, in ms from now, if any (``RetryAfter`` parses it, as the transport reads it for every service).
        public var retryAfterMs: Int64?

        /// Creates an answer.
        public init(status: Int, retryAfterMs: Int64? = nil) {
            self.status = status
            self.retryAfterMs = retryAfterMs
        }
    }

    /// The statuses that mean the service took the notification.
    public static let acceptedStatuses: Set<Int> = [200, 201, 202]
    /// The statuses that mean the subscription is gone.
    public static let goneStatuses: Set<Int> = [404, 410]
    /// The statuses that mean the VAPID credential was refused.
    public static let credentialStatuses: Set<Int> = [401, 403]

    public static func verdict(for answer: Answer) -> AnswerVerdict {
        verdict(status: answer.status, retryAfterMs: answer.retryAfterMs)
    }

    /// The verdict for an HTTP status (and the service's `Retry-After`, in ms, for a retried one).
    public static func verdict(status: Int, retryAfterMs: Int64? = nil) -> AnswerVerdict {
        if acceptedStatuses.contains(status) { return AnswerVerdict(.accepted) }
        if goneStatuses.contains(status) { return AnswerVerdict(.tokenDead) }
        if credentialStatuses.contains(status) { return AnswerVerdict(.credentialFailure) }
        if status == 429 || status >= 500 { return AnswerVerdict(.retryable, retryAfterMs: retryAfterMs) }
        return AnswerVerdict(.permanent)
    }

    /// Why a credential failure happened, for the log and the endpoint's state: the status's meaning and, when the
    /// service sent one, its reason (Apple's JSON `reason`, e.g. `BadJwtToken`).
    public static func credentialFailureExplanation(status: Int, origin: String, reason: String?) -> String {
        let meaning = status == 401 ? "401 Unauthorized: the VAPID token is missing or malformed"
            : "403 Forbidden: the VAPID token was refused (its signature, aud, exp or sub, or a key that is not the subscription's applicationServerKey)"
        return "\(origin) answered \(meaning)" + (reason.map { " (reason: \($0.prefix(100)))" } ?? "")
    }
}
