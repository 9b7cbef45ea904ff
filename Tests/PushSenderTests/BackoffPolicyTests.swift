import PushCore
import Testing

struct BackoffPolicyTests {
    let policy = BackoffPolicy(baseMs: 1000, capMs: 60_000)

    @Test func fullJitterScalesTheExponentialCeiling() {
        #expect(policy.delayMs(failedAttempts: 1, random: 0.5) == 500)
        #expect(policy.delayMs(failedAttempts: 2, random: 0.5) == 1000)
        #expect(policy.delayMs(failedAttempts: 4, random: 1) == 8000)
        #expect(policy.delayMs(failedAttempts: 3, random: 0) == 0)
    }

    @Test func ceilingIsCapped() {
        #expect(policy.delayMs(failedAttempts: 7, random: 1) == 60_000)
        #expect(policy.delayMs(failedAttempts: 200, random: 0.25) == 15_000)
    }

    @Test func equalJitterKeepsHalfTheCeilingAndNoJitterAllOfIt() {
        let equal = BackoffPolicy(baseMs: 100, capMs: 5000, jitter: 0.5)
        #expect(equal.delayMs(failedAttempts: 1, random: 0) == 50)
        #expect(equal.delayMs(failedAttempts: 1, random: 0.999_999) == 99)
        #expect(equal.delayMs(failedAttempts: 3, random: 0.5) == 300)
        #expect(equal.delayMs(failedAttempts: 30, random: 0) == 2500)
        let none = BackoffPolicy(baseMs: 1000, capMs: 600_000, jitter: 0)
        #expect(none.delayMs(failedAttempts: 1, random: 0.3) == 1000)
        #expect(none.delayMs(failedAttempts: 21, random: 0.9) == 600_000)
        #expect(BackoffPolicy(baseMs: 1, capMs: 9, jitter: 7).jitter == 1)
    }

    @Test func retryAfterIsAFloorAndTooLongOneGivesTheAttemptUp() {
        // Shorter than the backoff: the backoff (500 ms at random 0.5) stands.
        #expect(policy.delayMs(failedAttempts: 1, random: 0.5, retryAfterMs: 200, limitMs: 300_000) == 500)
        // Longer: waited in full, never shortened by the jitter or the cap.
        #expect(policy.delayMs(failedAttempts: 1, random: 0, retryAfterMs: 7000, limitMs: 300_000) == 7000)
        #expect(policy.delayMs(failedAttempts: 9, random: 1, retryAfterMs: 120_000, limitMs: 300_000) == 120_000)
        // None, or a date already past: the backoff.
        #expect(policy.delayMs(failedAttempts: 2, random: 0.5, retryAfterMs: nil, limitMs: 300_000) == 1000)
        #expect(policy.delayMs(failedAttempts: 2, random: 0.5, retryAfterMs: 0, limitMs: 300_000) == 1000)
        // Beyond the limit: not waited (the caller defers).
        #expect(policy.delayMs(failedAttempts: 1, random: 0.5, retryAfterMs: 300_001, limitMs: 300_000) == nil)
    }
}
