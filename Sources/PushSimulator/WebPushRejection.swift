/// Why the simulator's Web Push service refused a request: the status, the reason (Apple's web push service's
/// names where it has one, `{"reason": …}` as it answers) and one line saying exactly what was wrong.
public struct WebPushRejection: Error, Sendable, Equatable {
    /// The reasons, each with its HTTP status.
    public enum Reason: String, Sendable, CaseIterable {
        /// 401: no `Authorization: vapid …` (a missing header, another scheme such as the old draft's `WebPush`, or
        /// no `t`/`k`). RFC 8292 §4.
        case missingAuthorization = "MissingAuthorization"
        /// 403: the JWT does not verify with `k`, or its `aud`, `exp` or `sub` is wrong (Apple: BadJwtToken).
        case badJwtToken = "BadJwtToken"
        /// 403: the JWT's `exp` has passed.
        case expiredJwtToken = "ExpiredJwtToken"
        /// 403: `k` is not the applicationServerKey the subscription was made for (RFC 8292 §4.2; Apple's name).
        case vapidKeyMismatch = "VapidPkHashMismatch"
        /// 400: no `TTL` header, or not a number of seconds (RFC 8030 §5.2).
        case badTTL = "BadTtl"
        /// 400: `Urgency` is not very-low, low, normal or high (RFC 8030 §5.3).
        case badUrgency = "BadUrgency"
        /// 400: `Topic` is longer than 32 characters or outside the base64url alphabet (RFC 8030 §5.4; Apple's name).
        case badTopic = "BadWebPushTopic"
        /// 400: a header the service reads appears twice.
        case duplicateHeaders = "DuplicateHeaders"
        /// 415: a body whose `Content-Encoding` is not `aes128gcm` (RFC 8291 §4, RFC 9110 §15.5.16).
        case unsupportedContentEncoding = "UnsupportedContentEncoding"
        /// 400: the body does not decrypt with the subscription's keys (RFC 8291).
        case decryptionFailed = "DecryptionFailed"
        /// 413: more than 4096 bytes of body (RFC 8030 §7.2, RFC 8291 §4).
        case payloadTooLarge = "PayloadTooLarge"
        /// 404: no such push resource.
        case notFound = "NotFound"
        /// 405: a push resource takes POST only.
        case methodNotAllowed = "MethodNotAllowed"
        /// 410: the subscription expired or was unsubscribed.
        case unregistered = "Unregistered"
        /// 429 (fault): too many requests; `Retry-After` says when to come back.
        case tooManyRequests = "TooManyRequests"
        /// 503 (fault): the service is unavailable; `Retry-After` says when to come back.
        case serviceUnavailable = "ServiceUnavailable"
        /// 400: a subscribe request whose body is not `{"vapid": "<applicationServerKey>"}`.
        case badSubscribeRequest = "BadSubscribeRequest"
        /// 400: a UnifiedPush message without a body (SERV_1.2.0: 1–4096 bytes).
        case payloadEmpty = "PayloadEmpty"
        /// 400: a UnifiedPush message whose `Content-Encoding` is not `aes128gcm` (AND_3.0.0: push messages are
        /// RFC 8291 ciphertext; SERV_1.2.0 answers a bad request 400, where Web Push answers 415).
        case encryptionRequired = "EncryptionRequired"

        /// The HTTP status this reason is answered with.
        public var status: Int {
            switch self {
            case .missingAuthorization: 401
            case .badJwtToken, .expiredJwtToken, .vapidKeyMismatch: 403
            case .badTTL, .badUrgency, .badTopic, .duplicateHeaders, .decryptionFailed, .badSubscribeRequest, .payloadEmpty,
                .encryptionRequired:
                400
            case .unsupportedContentEncoding: 415
            case .payloadTooLarge: 413
            case .notFound: 404
            case .methodNotAllowed: 405
            case .unregistered: 410
            case .tooManyRequests: 429
            case .serviceUnavailable: 503
            }
        }
    }

    /// The reason.
    public let reason: Reason
    /// What exactly was wrong.
    public let message: String

    /// Creates a rejection.
    public init(_ reason: Reason, _ message: String) {
        self.reason = reason
        self.message = message
    }
}
