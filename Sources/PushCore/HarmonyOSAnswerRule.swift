/// Push Kit's answer rule for HarmonyOS NEXT (the scenario API): the one place that says which answers remove a push
/// token, which are retried, which stop the app's sending. Push Kit answers with an HTTP status and its own result
/// `code`; the code decides when there is one (Huawei's REST API reference, "Response Parameters": HTTP status codes
/// and service response codes):
///
/// | answer | verdict | Huawei says |
/// |---|---|---|
/// | `80000000` | accepted | "Success" |
/// | `80100000` / `80300007`, our token under `tokenFormatError` or `noRight` | tokenDead | the token is malformed, or not of this project's app |
/// | `80100000` / `80300007`, our token under another reason (`noPushTypeRight`, `countryNotSupport`, …) | permanent | the token is fine; the message may not go to it |
/// | `80100000`, our token not named | accepted | the message went to the tokens not named |
/// | `80300007`, no reasons given | tokenDead | "All the tokens are invalid" |
/// | `80200001`, `80200003` | credentialFailure | authentication failed; the JWT expired (the sender renews once first) |
/// | `80300002` | credentialFailure | the app may not send (Push Kit not enabled, no permission) |
/// | `80100001`, `80100003`, `80300008`, `80300010`, `80100016`, … | permanent | bad parameters or body, over 4096 bytes, token count, sensitive content |
/// | HTTP 503 | retryable | flow control: "distribute the sending speed evenly" |
/// | HTTP 500, 502, 429, any 5xx | retryable | internal error, unstable network (whatever the code) |
///
/// An invalid-token answer is suspect: another project's credentials make every token look invalid (`noRight`), so
/// the sender applies it through a ``PruningBreaker``. A 401 without a code is a credential failure (the sender
/// re-signs its JWT once before it asks this rule); a 404 (a wrong URL or project ID) is permanent, never a prune.
/// Any other code this version does not know is permanent.
public enum HarmonyOSAnswerRule: PushAnswerRule {
    /// Push Kit's result codes and token reasons this rule reads.
    public enum Code {
        /// Success.
        public static let success = "80000000"
        /// Some tokens failed; `msg` names them.
        public static let partialSuccess = "80100000"
        /// Some request parameters are wrong.
        public static let parameterError = "80100001"
        /// The message body is illegal.
        public static let illegalPayload = "80100003"
        /// Authentication failed (no JWT, a wrong one, another project's).
        public static let authFailed = "80200001"
        /// The JWT expired.
        public static let authExpired = "80200003"
        /// No permission to send.
        public static let noPermission = "80300002"
        /// Every token is invalid.
        public static let invalidTokens = "80300007"
        /// The message body is over 4096 bytes (tokens not counted).
        public static let tooLarge = "80300008"
        /// The number of tokens is outside 1…1000.
        public static let tokenCount = "80300010"
        /// Sensitive content in the message.
        public static let sensitiveContent = "80100016"
        /// The reason a result carries for a 503 without Push Kit's body: Huawei's "Traffic control".
        public static let trafficControl = "TrafficControl"
        /// The `illegalTokens` reasons that say the token itself is dead: malformed, or not of this project's app.
        public static let deadTokenReasons: Set<String> = ["tokenFormatError", "noRight"]
        /// Every reason the HarmonyOS sender gives a result (bounded, as metric labels need).
        public static let reasons: [String] = [
            success, partialSuccess, parameterError, illegalPayload, authFailed, authExpired, noPermission, invalidTokens,
            tooLarge, tokenCount, sensitiveContent, trafficControl,
        ]
    }

    public static func verdict(for answer: HarmonyOSAnswer) -> AnswerVerdict {
        verdict(for: answer, token: nil)
    }

    /// The verdict of `answer` for the notification sent to `token` (the reasons of a failed token are read for it).
    public static func verdict(for answer: HarmonyOSAnswer, token: String?) -> AnswerVerdict {
        let retry = AnswerVerdict(.retryable, retryAfterMs: answer.retryAfterMs)
        let reason = token.flatMap { answer.illegalReason(of: $0) }
        switch answer.code {
        case Code.success?:
            return AnswerVerdict(.accepted)
        case Code.partialSuccess?:
            guard let reason else { return AnswerVerdict(.accepted) }
            return AnswerVerdict(Code.deadTokenReasons.contains(reason) ? .tokenDead : .permanent)
        case Code.invalidTokens?:
            if let reason, !Code.deadTokenReasons.contains(reason) { return AnswerVerdict(.permanent) }
            return AnswerVerdict(.tokenDead)
        case Code.authFailed?, Code.authExpired?, Code.noPermission?:
            return AnswerVerdict(.credentialFailure)
        default:
            break
        }
        let status = answer.status
        if status == 429 || status >= 500 { return retry }
        if status == 200, answer.code == nil { return AnswerVerdict(.accepted) }
        if status == 401 || status == 403, answer.code == nil { return AnswerVerdict(.credentialFailure) }
        return AnswerVerdict(.permanent)
    }
}
