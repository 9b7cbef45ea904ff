/// APNs' answer rule, following Apple's response-handling rules: the one place that says which APNs answers
/// remove a token, which are retried, which stop an endpoint. Every reason list elsewhere (the store's prune
/// gate, the delivery history's SQL classification) is derived from ``verdict(status:reason:timestampMs:retryAfterMs:)``.
///
/// Apple adds reasons: a reason this version does not know is judged by its status alone — 410 is a dead token
/// (gated on its timestamp, like `Unregistered`), 429 and 5xx are retried, any other status is permanent.
public enum APNsAnswerRule: PushAnswerRule {
    /// One APNs answer.
    public struct Answer: Sendable, Equatable {
        /// The HTTP status.
        public var status: Int
        /// The body's `reason`, if any.
        public var reason: APNsReason?
        /// The body's `timestamp` (ms since 1970), sent with 410.
        public var timestampMs: Int64?
        /// The `Retry-After` header, in ms, if any.
        public var retryAfterMs: Int64?

        /// Creates an answer.
        public init(status: Int, reason: APNsReason?, timestampMs: Int64? = nil, retryAfterMs: Int64? = nil) {
            self.status = status
            self.reason = reason
            self.timestampMs = timestampMs
            self.retryAfterMs = retryAfterMs
        }
    }

    /// The status APNs gives a token that is no longer valid for the topic (`Unregistered`, `ExpiredToken`, and
    /// whatever reason Apple adds for it).
    public static let goneStatus = 410
    /// The status of too many requests; it and every status from ``serverErrorStatus`` up are retried.
    public static let tooManyRequestsStatus = 429
    /// The first server-error status.
    public static let serverErrorStatus = 500

    public static func verdict(for answer: Answer) -> AnswerVerdict {
        verdict(status: answer.status, reason: answer.reason, timestampMs: answer.timestampMs, retryAfterMs: answer.retryAfterMs)
    }

    /// The verdict for an HTTP status and reason (`timestampMs` is not needed to decide; it is what a gated
    /// prune is later compared with).
    public static func verdict(status: Int, reason: APNsReason?, timestampMs: Int64? = nil, retryAfterMs: Int64? = nil) -> AnswerVerdict {
        if status == 200 { return AnswerVerdict(.accepted) }
        switch reason {
        case .unregistered?, .expiredToken?:
            return AnswerVerdict(.tokenDead, gatedOnTimestamp: true)
        case .badDeviceToken?, .deviceTokenNotForTopic?:
            return AnswerVerdict(.tokenDead)
        case .badCertificate?, .badCertificateEnvironment?, .invalidProviderToken?, .missingProviderToken?,
             .unrelatedKeyIdInToken?, .badEnvironmentKeyIdInToken?, .forbidden?:
            return AnswerVerdict(.credentialFailure)
        case .expiredProviderToken?, .tooManyRequests?, .internalServerError?, .serviceUnavailable?,
             .shutdown?, .idleTimeout?, .tooManyProviderTokenUpdates?:
            return AnswerVerdict(.retryable, retryAfterMs: retryAfterMs)
        default:
            // A reason that says nothing about the token or the credentials, or one this version does not know.
            if isRetryableStatus(status) { return AnswerVerdict(.retryable, retryAfterMs: retryAfterMs) }
            if status == goneStatus { return AnswerVerdict(.tokenDead, gatedOnTimestamp: true) }
            return AnswerVerdict(.permanent)
        }
    }

    /// True for the statuses retried whatever their reason: 429 and 5xx.
    public static func isRetryableStatus(_ status: Int) -> Bool {
        status == tooManyRequestsStatus || status >= serverErrorStatus
    }

    /// The reasons this version knows that remove a token, at the status Apple pairs them with — derived from
    /// ``verdict(status:reason:timestampMs:retryAfterMs:)``, never listed twice. (An unknown reason at
    /// ``goneStatus`` removes it too.)
    public static let pruningReasons: [APNsReason] = APNsReason.known.filter {
        verdict(status: $0.status, reason: $0).prunes
    }

    /// The verdict for a stored answer: its status and Apple's reason string as stored (`nil` or empty: none).
    public static func verdict(status: Int, storedReason: String?) -> AnswerVerdict {
        verdict(status: status, reason: storedReason.flatMap { $0.isEmpty ? nil : APNsReason(rawValue: $0) })
    }
}
