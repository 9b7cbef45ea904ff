/// UnifiedPush's answer rule (SERV_1.2.0, the push server's answers to an application server): the one place that
/// says which distributor answers remove an endpoint, which are retried, which are final.
///
/// - Any 2xx (201 with `TTL: 0` is usual: a distributor keeps nothing): accepted.
/// - 404 (the spec's) and 410 (Web Push's, which some distributors send): the endpoint is gone → pruned.
/// - 400 and 413: permanent (malformed or too large).
/// - 3xx: permanent. Redirects are never followed (the spec, and request forgery: a redirect names a new address).
/// - 401 and 403: permanent for that message, unlike Web Push, where they stop the origin. Our decision: every user
///   picks a distributor, and a shared one (ntfy.sh) refuses per topic (its access control), so one endpoint's refusal
///   says nothing about the host's other users.
/// - 429: slow down for that endpoint (the spec says per endpoint, not per host): the message is retried no sooner
///   than `Retry-After`, the host's other endpoints unaffected.
/// - Anything else (5xx, other 4xx): retried (the spec: "others"), then deferred.
public enum UnifiedPushAnswerRule: PushAnswerRule {
    public typealias Answer = WebPushAnswerRule.Answer

    /// The statuses that mean the endpoint is gone.
    public static let goneStatuses: Set<Int> = [404, 410]
    /// The statuses that are final for the message.
    public static let permanentStatuses: Set<Int> = [400, 401, 403, 413]

    public static func verdict(for answer: Answer) -> AnswerVerdict {
        verdict(status: answer.status, retryAfterMs: answer.retryAfterMs)
    }

    /// The verdict for an HTTP status (and the distributor's `Retry-After`, in ms, for a retried one).
    public static func verdict(status: Int, retryAfterMs: Int64? = nil) -> AnswerVerdict {
        if (200...299).contains(status) { return AnswerVerdict(.accepted) }
        if goneStatuses.contains(status) { return AnswerVerdict(.tokenDead) }
        if permanentStatuses.contains(status) || (300...399).contains(status) { return AnswerVerdict(.permanent) }
        return AnswerVerdict(.retryable, retryAfterMs: retryAfterMs)
    }
}
