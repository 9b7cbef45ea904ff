import PushCore
import Testing

@Suite struct DeliveryLogScopeTests {
    @Test func allLogsEveryOutcomeButAPendingMarkerWhateverTheTarget() {
        for direct in [false, true] {
            let logged = DeliveryOutcome.Kind.allCases.filter { DeliveryLogScope.all.logs($0, direct: direct) }
            #expect(logged == [.accepted, .tokenDead, .rejected, .deferred])
        }
    }

    @Test func failuresLogsNoAcceptedNotificationOfABroadcastToAllDevicesOrAChannel() {
        let logged = DeliveryOutcome.Kind.allCases.filter { DeliveryLogScope.failures.logs($0, direct: false) }
        #expect(logged == [.tokenDead, .rejected, .deferred])
    }

    /// One rule for the CLI (`pushctl send --user`) and the API (`{"audience":{"user":…}}`): a send to a user is
    /// direct, as listed tokens are; an audience of segments only is not.
    @Test func aSendToAUserIsDirectLikeListedTokensAndASegmentIsNot() throws {
        let user = try #require(Audience(storedTexts: ["user = alice"]))
        let userAndSegment = try #require(Audience(storedTexts: ["user = alice", "locale = de*"]))
        let segment = try #require(Audience(storedTexts: ["locale = de*"]))
        #expect(DeliveryLogScope.isDirect(listedTokens: false, audience: user))
        #expect(DeliveryLogScope.isDirect(listedTokens: false, audience: userAndSegment))
        #expect(!DeliveryLogScope.isDirect(listedTokens: false, audience: segment))
        #expect(!DeliveryLogScope.isDirect(listedTokens: false, audience: nil))
        #expect(DeliveryLogScope.isDirect(listedTokens: true, audience: nil))
    }

    @Test func failuresStillLogsAcceptedNotificationsSentToListedTokens() {
        let logged = DeliveryOutcome.Kind.allCases.filter { DeliveryLogScope.failures.logs($0, direct: true) }
        #expect(logged == [.accepted, .tokenDead, .rejected, .deferred])
    }

    @Test func theDefaultIsFailures() {
        #expect(DeliveryLogScope.default == .failures)
    }

    @Test func theConfigSpellingsAreTheRawValues() {
        #expect(DeliveryLogScope(rawValue: "all") == .all)
        #expect(DeliveryLogScope(rawValue: "failures") == .failures)
        #expect(DeliveryLogScope(rawValue: "accepted") == nil)
    }
}
