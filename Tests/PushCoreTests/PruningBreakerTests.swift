import PushCore
import Testing

struct PruningBreakerTests {
    func breaker(_ state: PruningBreaker.State = .init()) -> PruningBreaker {
        PruningBreaker(consecutive: 50, ratio: 0.2, minimumAnswers: 100, state: state)
    }

    @Test func tripsAfterFiftyInARow() {
        var b = breaker()
        var trips: [Int] = []
        for i in 1...60 where b.record(badDeviceToken: true) == .tripped { trips.append(i) }
        #expect(trips == [50])  // reported once
        #expect(b.tripped)
    }

    @Test func tripsAtTwentyPercentOfHundredAnswers() {
        var b = breaker()
        var trippedAt: Int?
        for i in 1...100 {
            // Every fifth answer is BadDeviceToken: 20 of 100.
            if b.record(badDeviceToken: i % 5 == 0) == .tripped { trippedAt = i }
        }
        #expect(trippedAt == 100)
    }

    @Test func becomesConfidentlyHealthyOnceAfterEnoughGoodAnswers() {
        var b = breaker()
        var healthyAt: [Int] = []
        for i in 1...1000 where b.record(badDeviceToken: i % 50 == 0) == .healthy { healthyAt.append(i) }
        #expect(!b.tripped)
        #expect(b.isConfidentlyHealthy)
        #expect(healthyAt == [100])
    }

    @Test func aPersistedStateContinuesWhereTheLastRunStopped() {
        var first = breaker()
        for _ in 0..<120 { _ = first.record(badDeviceToken: false) }
        #expect(first.isConfidentlyHealthy)
        // The next run starts from the stored state: confident from its first answer.
        let next = breaker(first.state)
        #expect(next.isConfidentlyHealthy)
        var tripped = breaker()
        for _ in 0..<50 { _ = tripped.record(badDeviceToken: true) }
        #expect(breaker(tripped.state).tripped)
    }

    @Test func aTrippedBreakerHealsWhenTheEndpointIsFixed() {
        var b = breaker()
        for _ in 0..<50 { _ = b.record(badDeviceToken: true) }
        #expect(b.tripped)
        var changes: [PruningBreaker.Change] = []
        for _ in 0..<99 { if let c = b.record(badDeviceToken: false) { changes.append(c) } }
        #expect(b.tripped)  // not yet enough evidence since the trip
        if let c = b.record(badDeviceToken: false) { changes.append(c) }
        #expect(changes == [.healthy])
        #expect(!b.tripped && b.isConfidentlyHealthy)
    }

    @Test func oldHistoryDecaysSoANewStormStillTrips() {
        var b = breaker()
        for _ in 0..<50_000 { _ = b.record(badDeviceToken: false) }
        #expect(b.answers < PruningBreaker.decayAnswers)
        // A storm of one BadDeviceToken in four (never 50 in a row) must still trip by ratio.
        var trippedAfter: Int?
        for i in 1...20_000 where trippedAfter == nil {
            if b.record(badDeviceToken: i % 4 == 0) == .tripped { trippedAfter = i }
        }
        #expect(trippedAfter != nil)
    }
}
