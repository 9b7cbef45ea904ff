extension APNsReason {
    /// A notification that ended without an APNs answer (unreachable, TLS, dropped connections).
    public static let transportErrorLabel = "transportError"
    /// An APNs answer with a reason this version does not know.
    public static let unknownLabel = "unknown"

    /// The bounded form of a delivery's stored reason, for counters and metric labels: "" for none, Apple's
    /// reason when this version knows it, else ``transportErrorLabel`` (HTTP status 0: no answer; the stored
    /// reason is then the transport's error text) or ``unknownLabel``.
    public static func label(status: Int, reason: String?) -> String {
        guard let reason, !reason.isEmpty else { return "" }
        if case .unknown = APNsReason(rawValue: reason), !otherServicesReasons.contains(reason) {
            return status == 0 ? transportErrorLabel : unknownLabel
        }
        return reason
    }

    /// The other push services' reasons a label keeps as they are (bounded like Apple's): Web Push's answers as its
    /// sender names them (RFC 8030 has no reason field; a push service's own word when it sends one, e.g. the
    /// simulator's `NotFound`) and FCM's `FcmError` codes and Google's canonical statuses
    /// (https://firebase.google.com/docs/cloud-messaging/error-codes), and Push Kit's result codes
    /// (``HMSAnswerRule/Code/reasons``), and UnifiedPush's `AddressRefused` (a distributor whose address the address
    /// rule refused at connect: no answer, status 0, but a decision, not a transport error). Without them a web
    /// device's 404 or an Android device's `QUOTA_EXCEEDED` would count as `unknown`.
    public static let otherServicesReasons: Set<String> = Set([
        "NotFound", "Gone", "BadRequest", "PayloadTooLarge", "TooManyRequests", "ServiceUnavailable", "DecryptionFailed",
        "AddressRefused",
        FCMAnswerRule.ErrorCode.unregistered, FCMAnswerRule.ErrorCode.senderIdMismatch, FCMAnswerRule.ErrorCode.invalidArgument,
        FCMAnswerRule.ErrorCode.quotaExceeded, FCMAnswerRule.ErrorCode.unavailable, FCMAnswerRule.ErrorCode.internalError,
        FCMAnswerRule.ErrorCode.thirdPartyAuthError, "UNAUTHENTICATED", "PERMISSION_DENIED", "NOT_FOUND", "RESOURCE_EXHAUSTED",
    ] + HMSAnswerRule.Code.reasons + HarmonyOSAnswerRule.Code.reasons)
}
