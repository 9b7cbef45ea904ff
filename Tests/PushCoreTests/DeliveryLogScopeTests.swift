import PushCore
import Testing

@Suite struct DeliveryLogScopeTests {
    @Test func allLogsEveryOutcomeButAPendingMarker() {
        let logged = DeliveryOutcome.Kind.allCases.filter { DeliveryLogScope.all.logs($0) }
        #expect(logged == [.accepted, .tokenDead, .rejected, .deferred])
    }

    @Test func failuresLogsEverythingButAcceptedAndPending() {
        let logged = DeliveryOutcome.Kind.allCases.filter { DeliveryLogScope.failures.logs($0) }
        #expect(logged == [.tokenDead, .rejected, .deferred])
    }

    @Test func theConfigSpellingsAreTheRawValues() {
        #expect(DeliveryLogScope(rawValue: "all") == .all)
        #expect(DeliveryLogScope(rawValue: "failures") == .failures)
        #expect(DeliveryLogScope(rawValue: "accepted") == nil)
    }
}
