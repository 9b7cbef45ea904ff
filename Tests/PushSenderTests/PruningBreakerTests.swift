import Testing
@testable import PushSender

struct PruningBreakerTests {
    @Test func tripsAfterFiftyInARow() {
        var breaker = PruningBreaker(consecutive: 50, ratio: 0.2, minimumAnswers: 100)
        var trips: [Int] = []
        for i in 1...60 where breaker.record(badDeviceToken: true) { trips.append(i) }
        #expect(trips == [50])  // reported once
        #expect(breaker.tripped)
    }

    @Test func tripsAtTwentyPercentOfHundredAnswers() {
        var breaker = PruningBreaker(consecutive: 50, ratio: 0.2, minimumAnswers: 100)
        var trippedAt: Int?
        for i in 1...100 {
            // Every fifth answer is BadDeviceToken: 20 of 100.
            if breaker.record(badDeviceToken: i % 5 == 0) { trippedAt = i }
        }
        #expect(trippedAt == 100)
    }

    @Test func healthyEndpointStaysClosed() {
        var breaker = PruningBreaker(consecutive: 50, ratio: 0.2, minimumAnswers: 100)
        for i in 1...1000 { _ = breaker.record(badDeviceToken: i % 50 == 0) }
        #expect(!breaker.tripped)
        #expect(breaker.isConfidentlyHealthy)
    }
}
