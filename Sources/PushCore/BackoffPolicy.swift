/// Exponential backoff with jitter, the one formula every retry loop uses (the sender's retries and reconnects,
/// the engine's waits through a database outage, webhook redelivery): the ceiling doubles from ``baseMs`` per
/// failed attempt up to ``capMs``, and ``jitter`` of it is random so that many retrying callers spread out
/// (AWS's "full jitter" at 1, "equal jitter" at 0.5). Pure: the caller passes the random value in.
public struct BackoffPolicy: Sendable, Equatable {
    /// First retry's ceiling.
    public var baseMs: Int
    /// Largest ceiling.
    public var capMs: Int
    /// The random share of each ceiling, 0…1: 1 gives a delay anywhere in [0, ceiling], 0.5 at least half of it,
    /// 0 exactly the ceiling.
    public var jitter: Double

    /// Creates a policy (full jitter unless told otherwise).
    public init(baseMs: Int, capMs: Int, jitter: Double = 1) {
        self.baseMs = baseMs
        self.capMs = capMs
        self.jitter = min(max(jitter, 0), 1)
    }

    /// The ceiling before attempt `failedAttempts + 1`: `baseMs` doubled per failed attempt after the first, capped.
    public func ceilingMs(failedAttempts: Int) -> Int {
        let shift = min(max(failedAttempts - 1, 0), 30)
        return min(capMs, baseMs.multipliedReportingOverflow(by: 1 << shift).overflow ? capMs : baseMs << shift)
    }

    /// The delay before attempt `failedAttempts + 1`, given a uniform `random` in [0, 1).
    public func delayMs(failedAttempts: Int, random: Double) -> Int {
        let share = 1 - jitter + jitter * min(max(random, 0), 1)
        return Int(Double(ceilingMs(failedAttempts: failedAttempts)) * share)
    }

    /// The delay before attempt `failedAttempts + 1` when the service answered with a `Retry-After` of
    /// `retryAfterMs` (nil: none): the jittered backoff, but never less than what the service asked for — retrying
    /// sooner only earns another 429 and tells the service we ignore it. A wait longer than `limitMs` is not
    /// waited (nil: the caller gives the attempt up for now, e.g. defers the notification): shortening it would
    /// disobey the service, and waiting it out would hold the caller's slot (a sender's window, a run) for as long
    /// as any header says, a malformed or hostile one included.
    public func delayMs(failedAttempts: Int, random: Double, retryAfterMs: Int64?, limitMs: Int) -> Int? {
        let backoff = delayMs(failedAttempts: failedAttempts, random: random)
        guard let retryAfterMs, retryAfterMs > 0 else { return backoff }
        guard retryAfterMs <= Int64(limitMs) else { return nil }
        return max(backoff, Int(retryAfterMs))
    }
}
