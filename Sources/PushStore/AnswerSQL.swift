import PushCore

/// ``APNsAnswerRule`` as SQL (valid on SQLite and PostgreSQL alike), generated from the rule as ``AudienceSQL``
/// generates the filter language: the reason lists here are the rule evaluated over every reason this version
/// knows, never lists of their own. Used only for rows stored before their kind was: those are all APNs rows (every
/// device was an APNs device then); a Web Push or FCM row always carries its kind, and the store judges it by the
/// verdict its sender gave, never by APNs' rule.
enum AnswerSQL {
    /// The condition, over the named columns, for an answer the rule calls a dead token: a known reason that
    /// prunes (at the status Apple pairs it with), or a ``APNsAnswerRule/goneStatus`` answer whose reason is none,
    /// one this version does not know, or a known one the rule does not decide by itself.
    static func tokenDead(status: String, reason: String) -> String {
        let gone = APNsAnswerRule.goneStatus
        let decidedOtherwise = APNsReason.known.filter { !APNsAnswerRule.verdict(status: gone, reason: $0).prunes }
        return """
            \(reason) IN (\(list(APNsAnswerRule.pruningReasons))) OR (\(status) = \(gone) AND (\(reason) IS NULL OR \
            \(reason) NOT IN (\(list(decidedOtherwise)))))
            """
    }

    /// The condition for an answer retried whatever its reason (429, 5xx), or no answer at all (status 0).
    static func retriedOrUnanswered(status: String) -> String {
        "\(status) = 0 OR \(status) = \(APNsAnswerRule.tooManyRequestsStatus) OR \(status) >= \(APNsAnswerRule.serverErrorStatus)"
    }

    /// A delivery-log row's kind (``DeliveryOutcome/Kind``): the stored one, or the one its status and reason imply.
    static func historyKind(kind: String, status: String, reason: String) -> String {
        """
        coalesce(\(kind), CASE WHEN \(status) = 200 THEN 'accepted' \
        WHEN \(tokenDead(status: status, reason: reason)) THEN 'tokenDead' \
        WHEN \(retriedOrUnanswered(status: status)) THEN 'deferred' ELSE 'rejected' END)
        """
    }

    private static func list(_ reasons: [APNsReason]) -> String {
        reasons.map { "'\($0.rawValue)'" }.joined(separator: ", ")
    }
}
