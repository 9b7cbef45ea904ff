import Testing
@testable import PushSender

/// How long a readable connection waits before libcurl reads it (``ReadCadence``): never with few transfers in
/// flight, doubling while passes bring few answers for what is in flight, halving once one is full, and never longer
/// than a tenth of the answers' round trip or the absolute cap.
@Suite struct ReadCadenceTests {
    /// A cadence whose answers took `roundTripMs`.
    func cadence(roundTripMs: Int64) -> ReadCadence {
        var c = ReadCadence()
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
        var c = cadence(roundTripMs: 60_000)
        for _ in 0..<20 { c.passed(finished: 1, active: 1000) }
        #expect(c.holdMs == ReadCadence.maximumHoldMs)
    }

    @Test func aFullPassHalvesTheHoldAndAFastServerIsNeverHeld() {
        var c = cadence(roundTripMs: 3000)
        for _ in 0..<6 { c.passed(finished: 1, active: 1000) }
        #expect(c.holdMs == 32)
        // A sixteenth of what is in flight (62 of 1,000) makes a pass full.
        c.passed(finished: 62, active: 1000)
        #expect(c.holdMs == 16)
        for _ in 0..<5 { c.passed(finished: 500, active: 1000) }
        #expect(c.holdMs == 0)
        // Answers in bursts (a fast server, a round trip of a few ms): a tenth of the round trip rounds to no hold.
        var fast = cadence(roundTripMs: 5)
        for _ in 0..<10 { fast.passed(finished: 3, active: 1000) }
        #expect(fast.holdMs == 0)
    }

    @Test func theRoundTripIsAnAverageThatMovesSlowly() {
        var c = cadence(roundTripMs: 1000)
        c.answered(roundTripMs: 65_000)
        // One slow answer moves the average by a 64th of the difference.
        #expect(c.roundTripMs == 2000)
    }
}
