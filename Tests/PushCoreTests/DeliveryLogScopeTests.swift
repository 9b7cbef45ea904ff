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
