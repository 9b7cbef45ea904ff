import Testing
@testable import PushSender

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
}
