/// FCM HTTP v1's answer rule: the one place that says which FCM answers remove a registration token, which are
/// retried, which stop the app's sending. Each row follows Firebase's ErrorCode reference
/// (https://firebase.google.com/docs/reference/fcm/rest/v1/ErrorCode) and its error-codes guide
/// (https://firebase.google.com/docs/cloud-messaging/error-codes):
///
/// | answer | verdict | Firebase says |
/// |---|---|---|
/// | 200 | accepted | |
/// | 404 `UNREGISTERED` | tokenDead | "App instance was unregistered from FCM … the token used is no longer valid and a new one must be used" |
/// | 403 `SENDER_ID_MISMATCH` | tokenDead | "The authenticated sender ID is different from the sender ID for the registration token": this sender can never reach it |
/// | 400 `INVALID_ARGUMENT`, token named | tokenDead | "Invalid registration: check the format of the registration token" |
/// | 400 `INVALID_ARGUMENT`, otherwise | permanent | message too big, invalid data key, invalid TTL, package name: the request is wrong, not the token |
/// | 429 `QUOTA_EXCEEDED` | retryable | "Sending limit exceeded … retry using exponential backoff", honouring `Retry-After` |
/// | 503 `UNAVAILABLE` | retryable | "The server is overloaded … must honor the Retry-After header", else exponential backoff |
/// | 500 `INTERNAL` | retryable | "An unknown internal error occurred … retry following the same requirements as UNAVAILABLE" |
/// | 401 `THIRD_PARTY_AUTH_ERROR` | credentialFailure | "APNs certificate or web push auth key was invalid or missing" |
///
/// `INVALID_ARGUMENT` covers the token and the payload alike, so a token is removed only on a positive sign that
/// the token is what FCM refused: a `google.rpc.BadRequest` field violation naming `message.token`, or the exact
/// message Firebase's error-codes guide shows for an invalid registration token (its Example 2 carries no field
/// violation). Removing a token is irreversible; a payload error judged permanent only fails that send. The
/// `SENDER_ID_MISMATCH` and invalid-token verdicts are suspect (a wrong project's service account gets them for every
/// token): the sender applies them through a ``PruningBreaker``; `UNREGISTERED` is per-device evidence.
///
/// Answers FCM gives without a documented FCM code: 401 (`UNAUTHENTICATED`: the access token was refused) and 403
/// (`PERMISSION_DENIED`: the service account may not send for the project) are credential failures — the sender
/// renews its access token once before it asks this rule, so a 401 that reaches the rule is one renewal did not
/// cure. A 404 without `UNREGISTERED` (a wrong project id in the URL says NOT_FOUND too) is permanent, never a
/// prune: a misconfiguration must not empty the registry. 429 and any 5xx are retried whatever their code (a
/// proxy's 502 has no FCM body). Anything else, including a code this version does not know, is permanent.
public enum FCMAnswerRule: PushAnswerRule {
    /// One FCM answer.
    public struct Answer: Sendable, Equatable {
        /// The HTTP status.
        public var status: Int
        /// The error body, parsed (empty for 200 or a body that is not FCM's).
        public var error: FCMError
        /// The `Retry-After` header, in ms, if any.
        public var retryAfterMs: Int64?

        /// Creates an answer.
        public init(status: Int, error: FCMError = FCMError(), retryAfterMs: Int64? = nil) {
            self.status = status
            self.error = error
            self.retryAfterMs = retryAfterMs
        }

        /// Creates an answer from the status and raw response body.
        public init(status: Int, body: some Collection<UInt8>, retryAfterMs: Int64? = nil) {
            self.init(status: status, error: status == 200 ? FCMError() : FCMError(body: body), retryAfterMs: retryAfterMs)
        }
    }

    /// FCM's `errorCode` values this rule reads (the `FcmError` detail).
    public enum ErrorCode {
        /// 404: the app instance was unregistered; the token is dead.
        public static let unregistered = "UNREGISTERED"
        /// 403: the token belongs to another sender (project).
        public static let senderIdMismatch = "SENDER_ID_MISMATCH"
        /// 400: a request parameter, possibly the token, is invalid.
        public static let invalidArgument = "INVALID_ARGUMENT"
        /// 429: a sending quota was exceeded.
        public static let quotaExceeded = "QUOTA_EXCEEDED"
        /// 503: FCM is overloaded.
        public static let unavailable = "UNAVAILABLE"
        /// 500: an unknown internal error.
        public static let internalError = "INTERNAL"
        /// 401: the APNs certificate or web push key FCM relays with was refused.
        public static let thirdPartyAuthError = "THIRD_PARTY_AUTH_ERROR"
    }

    /// The field a `BadRequest` violation names when the registration token is what FCM refused.
    public static let tokenField = "message.token"
    /// The message Firebase's error-codes guide shows for an invalid registration token (Example 2).
    public static let invalidTokenMessage = "The registration token is not a valid FCM registration token"

    public static func verdict(for answer: Answer) -> AnswerVerdict {
        let status = answer.status
        let error = answer.error
        if status == 200 { return AnswerVerdict(.accepted) }
        let retry = AnswerVerdict(.retryable, retryAfterMs: answer.retryAfterMs)
        switch error.errorCode {
        case ErrorCode.unregistered?, ErrorCode.senderIdMismatch?:
            return AnswerVerdict(.tokenDead)
        case ErrorCode.thirdPartyAuthError?:
            return AnswerVerdict(.credentialFailure)
        case ErrorCode.quotaExceeded?, ErrorCode.unavailable?, ErrorCode.internalError?:
            return retry
        default:
            break
        }
        if status == 400, namesTheToken(error) { return AnswerVerdict(.tokenDead) }
        if status == 429 || status >= 500 { return retry }
        if status == 401 || status == 403 { return AnswerVerdict(.credentialFailure) }
        return AnswerVerdict(.permanent)
    }

    /// The verdict for a status and raw body (what the transport has).
    public static func verdict(status: Int, body: some Collection<UInt8>, retryAfterMs: Int64? = nil) -> AnswerVerdict {
        verdict(for: Answer(status: status, body: body, retryAfterMs: retryAfterMs))
    }

    /// True when an `INVALID_ARGUMENT` answer says the registration token itself is invalid.
    static func namesTheToken(_ error: FCMError) -> Bool {
        guard error.status == nil || error.status == ErrorCode.invalidArgument else { return false }
        return error.fieldViolations.contains(tokenField) || error.message == invalidTokenMessage
    }
}
