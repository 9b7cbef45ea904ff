import Synchronization

/// A token bucket per API key: `rate` requests per second with bursts up to `burst`.
public final class RateLimiter: Sendable {
    private struct Bucket {
        var tokens: Double
        var updated: Double
    }

    private let rate: Double
    private let burst: Double
    private let now: @Sendable () -> Double
    private let buckets = Mutex<[String: Bucket]>([:])

    /// Creates a limiter. `now` returns seconds on a monotonic clock (injected for tests).
    public init(rate: Double, burst: Double, now: @escaping @Sendable () -> Double = RateLimiter.monotonicSeconds) {
        self.rate = rate
        self.burst = max(burst, 1)
        self.now = now
    }

    /// Takes one token for `key`. Returns nil when allowed, else the seconds until a token is available.
    public func acquire(_ key: String) -> Double? {
        let t = now()
        return buckets.withLock { buckets -> Double? in
            var bucket = buckets[key] ?? Bucket(tokens: burst, updated: t)
            bucket.tokens = min(burst, bucket.tokens + (t - bucket.updated) * rate)
            bucket.updated = t
            defer { buckets[key] = bucket }
            if bucket.tokens >= 1 {
                bucket.tokens -= 1
                return nil
            }
            return (1 - bucket.tokens) / rate
        }
    }

    /// Seconds on the monotonic clock.
    public static let monotonicSeconds: @Sendable () -> Double = {
        let d = ContinuousClock.now - ContinuousClock.Instant.zeroReference
        return Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }
}

extension ContinuousClock.Instant {
    fileprivate static let zeroReference = ContinuousClock.now
}
