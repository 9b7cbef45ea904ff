import PushCore
import Testing

@Suite struct APNsAnswerRuleTests {
    typealias Rule = APNsAnswerRule

    @Test func deadTokenAnswersPruneAndOnly410sAreGatedOnTheTimestamp() {
        for reason in [APNsReason.unregistered, .expiredToken] {
            #expect(Rule.verdict(status: 410, reason: reason) == AnswerVerdict(.tokenDead, gatedOnTimestamp: true))
        }
        for reason in [APNsReason.badDeviceToken, .deviceTokenNotForTopic] {
            #expect(Rule.verdict(status: 400, reason: reason) == AnswerVerdict(.tokenDead))
        }
        #expect(Rule.pruningReasons == [.badDeviceToken, .deviceTokenNotForTopic, .expiredToken, .unregistered])
    }

    /// Apple adds reasons: one this version does not know is judged by its status, so a 410 is a dead token.
    @Test func anUnknownReasonIsJudgedByItsStatus() {
        let inactive = APNsReason(rawValue: "TokenInactive")
        #expect(inactive == .unknown("TokenInactive"))
        let gone = Rule.verdict(status: 410, reason: inactive, timestampMs: 7)
        #expect(gone.kind == .tokenDead && gone.prunes && gone.gatedOnTimestamp)
        #expect(Rule.verdict(status: 410, reason: nil).prunes)
        #expect(Rule.verdict(status: 400, reason: inactive) == AnswerVerdict(.permanent))
        #expect(Rule.verdict(status: 429, reason: inactive).kind == .retryable)
        #expect(Rule.verdict(status: 503, reason: inactive).kind == .retryable)
        #expect(Rule.verdict(status: 403, reason: inactive).kind == .permanent)
        #expect(APNsOutcome.classify(status: 410, reason: inactive, timestampMs: 7) == .tokenDead(inactive, timestampMs: 7))
        // A stored answer reads the same.
        #expect(Rule.verdict(status: 410, storedReason: "TokenInactive") == gone)
        #expect(Rule.verdict(status: 410, storedReason: "") == gone)
    }

    @Test func credentialsRetriesAndPermanentRefusals() {
        for reason in [APNsReason.badCertificate, .badCertificateEnvironment, .invalidProviderToken, .forbidden] {
            #expect(Rule.verdict(status: 403, reason: reason) == AnswerVerdict(.credentialFailure))
        }
        #expect(Rule.verdict(status: 403, reason: .expiredProviderToken).kind == .retryable)
        #expect(Rule.verdict(status: 400, reason: .idleTimeout).kind == .retryable)
        #expect(Rule.verdict(status: 400, reason: .badTopic) == AnswerVerdict(.permanent))
        #expect(Rule.verdict(status: 413, reason: .payloadTooLarge) == AnswerVerdict(.permanent))
        #expect(Rule.verdict(status: 200, reason: nil) == AnswerVerdict(.accepted))
        #expect(Rule.verdict(status: 200, reason: nil).settlesCleanly && Rule.verdict(status: 410, reason: nil).settlesCleanly)
        #expect(!Rule.verdict(status: 400, reason: .badTopic).settlesCleanly)
    }

    @Test func retryAfterIsKeptOnlyOnRetryableVerdicts() {
        let answer = Rule.Answer(status: 429, reason: .tooManyRequests, retryAfterMs: 3000)
        #expect(Rule.verdict(for: answer) == AnswerVerdict(.retryable, retryAfterMs: 3000))
        #expect(Rule.verdict(status: 410, reason: .unregistered, retryAfterMs: 3000).retryAfterMs == nil)
        #expect(AnswerVerdict(.tokenDead, gatedOnTimestamp: true, retryAfterMs: 5).retryAfterMs == nil)
        #expect(AnswerVerdict(.permanent, gatedOnTimestamp: true).gatedOnTimestamp == false)
    }

    /// The prune request the sender hands the store is judged by the same rule: its status decides for an
    /// unknown reason.
    @Test func aPruneRequestCarriesItsStatus() {
        #expect(PruneRequest(reason: .unregistered).status == 410 && PruneRequest(reason: .unregistered).verdict.prunes)
        #expect(PruneRequest(reason: .unknown("TokenInactive"), status: 410).verdict.prunes)
        #expect(!PruneRequest(reason: .unknown("TokenInactive")).verdict.prunes)
        #expect(!PruneRequest(reason: .tooManyRequests).verdict.prunes)
    }

    /// A second push service maps its own answers onto the same kinds with its own pure function.
    @Test func anotherServiceMapsOntoTheSameKinds() {
        enum WebPushRule: PushAnswerRule {
            static func verdict(for status: Int) -> AnswerVerdict {
                switch status {
                case 201: AnswerVerdict(.accepted)
                case 404, 410: AnswerVerdict(.tokenDead)
                case 429, 500...: AnswerVerdict(.retryable)
                default: AnswerVerdict(.permanent)
                }
            }
        }
        #expect(WebPushRule.verdict(for: 410).prunes && !WebPushRule.verdict(for: 410).gatedOnTimestamp)
        #expect(WebPushRule.verdict(for: 201).kind == Rule.verdict(status: 200, reason: nil).kind)
    }
}
