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
        /// The `Retry-After` header, in ms from now, if any (``retryAfterMs(header:nowMs:)`` reads it).
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

    /// `Retry-After` (RFC 9110 §10.2.3) in ms from `nowMs`: delta-seconds or an IMF-fixdate
    /// (`Sun, 06 Nov 1994 08:49:37 GMT`). Nil when absent or unreadable; a date in the past is 0.
    public static func retryAfterMs(header: String?, nowMs: Int64) -> Int64? {
        guard let text = header?.trimmingASCIISpaces, !text.isEmpty else { return nil }
        if text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) {
            guard text.count <= 9, let seconds = Int64(text) else { return nil }
            return seconds * 1000
        }
        guard let dateMs = imfFixdateMs(text) else { return nil }
        return max(0, dateMs - nowMs)
    }

    /// An IMF-fixdate in ms since 1970, or nil.
    static func imfFixdateMs(_ text: String) -> Int64? {
        let parts = text.split(separator: " ", omittingEmptySubsequences: false)
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        let weekdays = ["Mon,", "Tue,", "Wed,", "Thu,", "Fri,", "Sat,", "Sun,"]
        guard parts.count == 6, weekdays.contains(String(parts[0])), parts[5] == "GMT", parts[1].count == 2,
              let day = Int64(parts[1]), let monthIndex = months.firstIndex(of: String(parts[2])),
              parts[3].count == 4, let year = Int64(parts[3])
        else { return nil }
        let clock = parts[4].split(separator: ":", omittingEmptySubsequences: false)
        guard clock.count == 3, clock.allSatisfy({ $0.count == 2 }),
              let hour = Int64(clock[0]), let minute = Int64(clock[1]), let second = Int64(clock[2]),
              (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        let days = Timestamp.days(fromCivil: year, Int64(monthIndex + 1), day)
        return ((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000
    }
}

private extension String {
    var trimmingASCIISpaces: String {
        var bytes = Substring(self)
        while bytes.first == " " || bytes.first == "\t" { bytes.removeFirst() }
        while bytes.last == " " || bytes.last == "\t" { bytes.removeLast() }
        return String(bytes)
    }
}
