import Crypto
import PushCore
import PushSender
import Testing

/// TTL, Urgency and Topic from the notification the engine prepared.
@Suite struct WebPushHeadersTests {
    @Test func ttlCountsDownToTheExpirationAndDefaultsTo28Days() {
        let now: Int64 = 1_700_000_000_000
        #expect(WebPushHeaders(expiration: 1_700_000_060, priority: .immediate, collapseId: nil, nowMs: now).ttl == 60)
        #expect(WebPushHeaders(expiration: 1_600_000_000, priority: .immediate, collapseId: nil, nowMs: now).ttl == 0)
        #expect(WebPushHeaders(expiration: 0, priority: .immediate, collapseId: nil, nowMs: now).ttl == 0)
        #expect(WebPushHeaders(expiration: nil, priority: .immediate, collapseId: nil, nowMs: now).ttl == 2_419_200)
        // Part of a second left rounds down: never a TTL past the expiration.
        #expect(WebPushHeaders(expiration: 1_700_000_060, priority: .immediate, collapseId: nil, nowMs: now + 1).ttl == 59)
    }

    @Test func urgencyFollowsThePriority() {
        #expect(WebPushHeaders(expiration: nil, priority: .immediate, collapseId: nil, nowMs: 0).urgency == "high")
        #expect(WebPushHeaders(expiration: nil, priority: .conserve, collapseId: nil, nowMs: 0).urgency == "normal")
        #expect(WebPushHeaders(expiration: nil, priority: .low, collapseId: nil, nowMs: 0).urgency == "low")
    }

    @Test func aShortBase64URLCollapseIdIsTheTopicAndAnyOtherIsDerived() {
        #expect(WebPushHeaders.topic(for: "sale_2026-11") == "sale_2026-11")
        #expect(WebPushHeaders.topic(for: String(repeating: "a", count: 32)) == String(repeating: "a", count: 32))
        let long = "0f9c2a7e-5b1d-4c3e-8a6f-2d4b6c8e0a1b"  // a job id: 36 characters
        let derived = WebPushHeaders.topic(for: long)
        #expect(derived == Base64URL.encode(Array(SHA256.hash(data: Array(long.utf8)).prefix(24))))
        #expect(derived.count == 32 && derived.utf8.allSatisfy(Base64URL.isAlphabet))
        #expect(WebPushHeaders.topic(for: "has space") != "has space")
        #expect(WebPushHeaders.topic(for: "has space").count == 32)
        #expect(WebPushHeaders.topic(for: long) == derived, "stable")
    }
}
