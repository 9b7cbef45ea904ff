/// Push Kit's answer rule for HMS Core: the one place that says which answers remove a push token, which are
/// retried, which stop the app's sending. Push Kit answers with an HTTP status and its own result `code`; the code
/// decides when there is one (developer.huawei.com: "Sending Downlink Messages", its result codes, and the server
/// FAQ on the common ones):
///
/// | answer | verdict | Huawei says |
/// |---|---|---|
/// | `80000000` | accepted | "Success" |
/// | `80100000`, our token among `illegal_tokens` | tokenDead | partial success: the tokens that failed are named in `msg` |
/// | `80100000`, otherwise | accepted | the message went to the tokens not named |
/// | `80300007` | tokenDead | "All the tokens are invalid": malformed, or another app's token |
/// | `80200001`, `80200003` | credentialFailure | OAuth failure; access token expired (the sender renews once first) |
/// | `80300002` | credentialFailure | the app may not send (Push Kit not enabled, no permission) |
/// | `80100003`, `80300008`, `80300010`, `80100016`, … | permanent | bad message body, too large, token count, sensitive content |
/// | HTTP 503 | retryable | flow control: "distribute the sending speed evenly" |
/// | HTTP 500, 502, 429, any 5xx | retryable | internal error, unstable network (whatever the code) |
///
/// `80300007` is suspect: a wrong client ID's credentials make every token look invalid, so the sender applies it
/// through a ``PruningBreaker``, never one broadcast deleting every HMS device. A 401 without a code is a credential
/// failure (the sender renews its access token once before it asks this rule); a 404 (a wrong URL) is permanent,
/// never a prune. Any other code this version does not know is permanent.
public enum HMSAnswerRule: PushAnswerRule {
    /// Push Kit's result codes this rule reads.
    public enum Code {
        /// Success.
        public static let success = "80000000"
        /// Some tokens failed; `msg` names them.
        public static let partialSuccess = "80100000"
        /// The message body is illegal.
        public static let illegalPayload = "80100003"
        /// OAuth authentication failed (no or a wrong access token, another app's token).
        public static let oauthFailed = "80200001"
        /// The access token expired.
        public static let oauthExpired = "80200003"
        /// No permission to send.
        public static let noPermission = "80300002"
        /// Every token is invalid.
        public static let invalidTokens = "80300007"
        /// The message body is over 4096 bytes.
        public static let tooLarge = "80300008"
        /// The number of tokens is outside 1…1000.
        public static let tokenCount = "80300010"
        /// Sensitive content in the message.
        public static let sensitiveContent = "80100016"
        /// The reason a result carries for a 503 without Push Kit's body: Huawei's "Traffic control".
        public static let trafficControl = "TrafficControl"
        /// Every reason the HMS sender gives a result (bounded, as metric labels need).
        public static let reasons: [String] = [
            success, partialSuccess, illegalPayload, oauthFailed, oauthExpired, noPermission, invalidTokens, tooLarge,
            tokenCount, sensitiveContent, trafficControl,
        ]
    }

    public static func verdict(for answer: HMSAnswer) -> AnswerVerdict {
        verdict(for: answer, token: nil)
    }

    /// The verdict of `answer` for the notification sent to `token` (a partial success is read for it).
    public static func verdict(for answer: HMSAnswer, token: String?) -> AnswerVerdict {
        let retry = AnswerVerdict(.retryable, retryAfterMs: answer.retryAfterMs)
        switch answer.code {
        case Code.success?:
            return AnswerVerdict(.accepted)
        case Code.partialSuccess?:
            if let token, answer.illegalTokens.contains(token) { return AnswerVerdict(.tokenDead) }
            return AnswerVerdict(.accepted)
        case Code.invalidTokens?:
            return AnswerVerdict(.tokenDead)
        case Code.oauthFailed?, Code.oauthExpired?, Code.noPermission?:
            return AnswerVerdict(.credentialFailure)
        default:
            break
        }
        let status = answer.status
        if status == 429 || status >= 500 { return retry }
        // Huawei's HTTP table: 200 is success; a 200 without Push Kit's body carries no other sign.
        if status == 200, answer.code == nil { return AnswerVerdict(.accepted) }
        if status == 401 || status == 403, answer.code == nil { return AnswerVerdict(.credentialFailure) }
        return AnswerVerdict(.permanent)
    }
}
