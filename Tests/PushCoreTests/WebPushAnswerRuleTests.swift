import PushCore
import Testing

@Suite struct WebPushAnswerRuleTests {
    typealias Rule = WebPushAnswerRule

    @Test func eachStatusMapsToItsVerdict() {
        for status in [200, 201, 202] { #expect(Rule.verdict(status: status) == AnswerVerdict(.accepted)) }
        for status in [404, 410] {
            let verdict = Rule.verdict(status: status)
            #expect(verdict == AnswerVerdict(.tokenDead) && verdict.prunes && !verdict.gatedOnTimestamp)
        }
        for status in [400, 413, 204, 301, 418, 422] { #expect(Rule.verdict(status: status) == AnswerVerdict(.permanent), "\(status)") }
        for status in [401, 403] { #expect(Rule.verdict(status: status) == AnswerVerdict(.credentialFailure)) }
        for status in [429, 500, 502, 503, 504] {
            #expect(Rule.verdict(status: status, retryAfterMs: 30_000) == AnswerVerdict(.retryable, retryAfterMs: 30_000))
        }
        #expect(Rule.verdict(for: .init(status: 429)).retryAfterMs == nil)
        #expect(Rule.verdict(for: .init(status: 410, retryAfterMs: 5)).retryAfterMs == nil)
        #expect(Rule.credentialFailureExplanation(status: 403, origin: "https://web.push.apple.com", reason: "BadJwtToken")
            .hasSuffix("(reason: BadJwtToken)"))
    }

    @Test func retryAfterIsReadAsSecondsOrAnHTTPDate() {
        let now: Int64 = 784_111_777_000  // Sun, 06 Nov 1994 08:49:37 GMT
        #expect(Rule.retryAfterMs(header: "120", nowMs: now) == 120_000)
        #expect(Rule.retryAfterMs(header: " 0 ", nowMs: now) == 0)
        #expect(Rule.retryAfterMs(header: "Sun, 06 Nov 1994 08:50:37 GMT", nowMs: now) == 60_000)
        #expect(Rule.retryAfterMs(header: "Sun, 06 Nov 1994 08:48:37 GMT", nowMs: now) == 0)
        for bad in [nil, "", "-1", "1.5", "soon", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 UTC", "9999999999"] {
            #expect(Rule.retryAfterMs(header: bad, nowMs: now) == nil, "\(bad ?? "nil")")
        }
    }
}
