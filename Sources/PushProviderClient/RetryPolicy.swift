import Foundation

/// When to try a request again and how long to wait first. A fleet of phones that lost the server at the same
/// moment must not come back in lock-step, so waits grow exponentially and are jittered; the server's own
/// `Retry-After` (on 429 and 503) is a floor, never shortened; and a 4xx other than 408 and 429 is the request's
/// own fault, so sending it again can only fail again.
public struct RetryPolicy: Sendable {
    /// Attempts per request within one `save()` (the first included); after the last, the change waits on disk
    /// for the next `save()`.
    public var maxAttempts: Int
    /// The first wait, in seconds.
    public var initialDelay: TimeInterval
    /// Each further wait is this many times the one before.
    public var multiplier: Double
    /// The longest computed wait (before jitter).
    public var maxDelay: TimeInterval
    /// The longest `Retry-After` waited for inside a `save()`; a longer one ends the call and is kept as the time
    /// before which no later `save()` sends (a server saying "come back in an hour" must not hold the app's call).
    public var maxRetryAfter: TimeInterval
    /// A number in `0..<1` for the jitter (injected so a test can pin it).
    public var random: @Sendable () -> Double

    /// Creates one; the default is 4 attempts waiting about 1, 2 and 4 s.
    public init(
        maxAttempts: Int = 4, initialDelay: TimeInterval = 1, multiplier: Double = 2, maxDelay: TimeInterval = 60,
        maxRetryAfter: TimeInterval = 60, random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) {
        self.maxAttempts = max(1, maxAttempts)
        self.initialDelay = initialDelay
        self.multiplier = multiplier
        self.maxDelay = maxDelay
        self.maxRetryAfter = maxRetryAfter
        self.random = random
    }

    /// The default policy.
    public static var standard: RetryPolicy { RetryPolicy() }

    /// True when an answer with `status` may be sent again: 408, 429 and 5xx. Every other 4xx is final.
    public static func isRetryable(status: Int) -> Bool {
        status == 408 || status == 429 || (500...599).contains(status)
    }

    /// The wait after failed attempt number `attempt` (1-based): "equal jitter", a uniform pick in the upper half of
    /// the exponential step `initialDelay × multiplier^(attempt-1)` (capped at `maxDelay`), and never less than
    /// `retryAfter` when the server gave one.
    public func delay(afterAttempt attempt: Int, retryAfter: TimeInterval?) -> TimeInterval {
        let step = min(maxDelay, initialDelay * pow(multiplier, Double(max(0, attempt - 1))))
        let jittered = step / 2 + step / 2 * random()
        return max(jittered, retryAfter ?? 0)
    }

    /// Seconds from a `Retry-After` value: delta-seconds, or an HTTP date (then relative to `now`); nil when absent
    /// or unreadable.
    public static func retryAfterSeconds(_ value: String?, now: Date) -> TimeInterval? {
        guard let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        if let seconds = Int(value) { return TimeInterval(max(0, seconds)) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: value) else { return nil }
        return max(0, date.timeIntervalSince(now))
    }
}
