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
}
