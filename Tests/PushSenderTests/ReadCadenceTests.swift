import Testing
@testable import PushSender

/// How long a readable connection waits before libcurl reads it (``ReadCadence``): never with few transfers in
/// flight, doubling while passes bring few answers for what is in flight, halving once one is full, and never longer
/// than a tenth of the answers' round trip — or, while the server queues, half its queue — nor the absolute cap, nor
/// a quarter of what the round trip leaves of the request timeout.
@Suite struct ReadCadenceTests {
    /// A cadence whose answers took `roundTripMs`.
    func cadence(roundTripMs: Int64, requestTimeoutMs: Int = 30_000) -> ReadCadence {
        var c = ReadCadence(requestTimeoutMs: requestTimeoutMs)
        c.answered(roundTripMs: roundTripMs)
        return c
    }

    @Test func withFewTransfersInFlightAReadIsNeverHeld() {
        var c = cadence(roundTripMs: 3000)
        for _ in 0..<10 { c.passed(finished: 1, active: ReadCadence.minimumActive - 1) }
        #expect(c.holdMs == 0)
    }

    @Test func thinPassesDoubleTheHoldUpToATenthOfTheRoundTrip() {
        var c = cadence(roundTripMs: 400)
        var holds: [Int] = []
        for _ in 0..<8 {
            c.passed(finished: 1, active: 1000)
            holds.append(c.holdMs)
        }
        #expect(holds == [1, 2, 4, 8, 16, 32, 40, 40])
    }

    @Test func theHoldNeverPassesTheAbsoluteCap() {
        var c = cadence(roundTripMs: 60_000, requestTimeoutMs: 600_000)
        for _ in 0..<20 { c.passed(finished: 1, active: 1000) }
        #expect(c.holdMs == ReadCadence.maximumHoldMs)
    }

    @Test func aFullPassHalvesTheHoldAndAFastServerIsNeverHeld() {
        var c = cadence(roundTripMs: 3000)
        for _ in 0..<6 { c.passed(finished: 1, active: 1000) }
        #expect(c.holdMs == 32)
        // A quarter of what is in flight (250 of 1,000) makes a pass full; 249 does not.
        c.passed(finished: 249, active: 1000)
        #expect(c.holdMs == 64)
        c.passed(finished: 250, active: 1000)
        #expect(c.holdMs == 32)
        for _ in 0..<6 { c.passed(finished: 500, active: 1000) }
        #expect(c.holdMs == 0)
        // Answers in bursts (a fast server, a round trip of a few ms): a tenth of the round trip rounds to no hold.
        var fast = cadence(roundTripMs: 5)
        for _ in 0..<10 { fast.passed(finished: 3, active: 1000) }
        #expect(fast.holdMs == 0)
    }

    /// A server answering 300/s with 1,000 in flight: answers wait ~3.3 s in its queue, where the first ones (before a
    /// queue formed) took 5 ms. A tenth of the round trip (330 ms) left passes of ~75 answers; half the queue lets
    /// the hold reach the absolute cap, where a pass carries ~300.
    func queueingServer(requestTimeoutMs: Int = 30_000, queueMs: Int64 = 3300) -> ReadCadence {
        var c = ReadCadence(requestTimeoutMs: requestTimeoutMs)
        c.answered(roundTripMs: 5, nowMs: 1_000)
        for i in 0..<1000 { c.answered(roundTripMs: queueMs, nowMs: 1_000 + Int64(i)) }
        return c
    }

    @Test func whileTheServerQueuesTheHoldMayReachHalfTheQueue() {
        var c = queueingServer()
        #expect(c.minimumRoundTripMs == 5)
        #expect(Int(c.roundTripMs) == 3299)
        for _ in 0..<12 { c.passed(finished: 10, active: 1000) }
        #expect(c.holdMs == ReadCadence.maximumHoldMs)
        // The same round trip without a shorter one (a far server, no queue): a tenth of it.
        var far = cadence(roundTripMs: 3300)
        for _ in 0..<12 { far.passed(finished: 10, active: 1000) }
        #expect(far.holdMs == 330)
        // A shorter queue: half of it (a 1.2 s queue, ~600 ms).
        var short = queueingServer(queueMs: 1205)
        for _ in 0..<12 { short.passed(finished: 10, active: 1000) }
        #expect(short.holdMs == (Int(short.roundTripMs) - 5) / 2)
        #expect((590...600).contains(short.holdMs))
    }

    @Test func theShortestRoundTripIsForgottenAfterTwoEpochs() {
        var c = queueingServer()
        // 5 to 10 s later the 5 ms answer is in the previous epoch, still counted; after 10 s it is gone.
        c.answered(roundTripMs: 3300, nowMs: 1_000 + ReadCadence.minimumEpochMs + 1)
        #expect(c.minimumRoundTripMs == 5)
        c.answered(roundTripMs: 3300, nowMs: 1_000 + 2 * ReadCadence.minimumEpochMs + 2)
        #expect(c.minimumRoundTripMs == 3300)
        for _ in 0..<12 { c.passed(finished: 10, active: 1000) }
        #expect(c.holdMs == 329)
    }

    @Test func aHeldAnswerNeverRunsIntoTheRequestTimeout() {
        // Answers that wait 9 s of a 10 s timeout: at most a quarter of the 1 s left.
        var c = queueingServer(requestTimeoutMs: 10_000, queueMs: 9_000)
        for _ in 0..<12 { c.passed(finished: 10, active: 1000) }
        #expect(c.holdMs == 250)
    }

    @Test func theRoundTripIsAnAverageThatMovesSlowly() {
        var c = cadence(roundTripMs: 1000)
        c.answered(roundTripMs: 65_000)
        // One slow answer moves the average by a 64th of the difference.
        #expect(c.roundTripMs == 2000)
    }
}
