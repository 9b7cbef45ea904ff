/// What a provider must do with an APNs answer, following Apple's response-handling rules.
public enum APNsOutcome: Sendable, Equatable {
    /// 200: APNs accepted the notification.
    case accepted
    /// The token is dead: prune it from the registry (410 gated on `timestampMs`; 400 token errors at once).
    case tokenDead(APNsReason, timestampMs: Int64?)
    /// Never retry: the request itself is wrong (BadTopic, PayloadTooLarge, …).
    case permanent(APNsReason)
    /// Try again later, with backoff and the same apns-id.
    case retryable(APNsReason)
    /// The credentials are wrong for this endpoint: stop sending there instead of hammering APNs.
    case credentialFailure(APNsReason)

    /// Classifies an HTTP status and reason.
    public static func classify(status: Int, reason: APNsReason?, timestampMs: Int64? = nil) -> APNsOutcome {
        if status == 200 { return .accepted }
        let reason = reason ?? .unknown("HTTP \(status)")
        switch reason {
        case .unregistered, .expiredToken:
            return .tokenDead(reason, timestampMs: timestampMs)
        case .badDeviceToken, .deviceTokenNotForTopic:
            return .tokenDead(reason, timestampMs: nil)
        case .badCertificate, .badCertificateEnvironment, .invalidProviderToken, .missingProviderToken,
             .unrelatedKeyIdInToken, .badEnvironmentKeyIdInToken, .forbidden:
            return .credentialFailure(reason)
        case .expiredProviderToken, .tooManyRequests, .internalServerError, .serviceUnavailable,
             .shutdown, .idleTimeout, .tooManyProviderTokenUpdates:
            return .retryable(reason)
        default:
            if status == 429 || status >= 500 { return .retryable(reason) }
            if status == 410 { return .tokenDead(reason, timestampMs: timestampMs) }
            return .permanent(reason)
        }
    }

    /// True when the notification reached a final state (nothing left to retry).
    public var isFinal: Bool {
        if case .retryable = self { return false }
        return true
    }
}
