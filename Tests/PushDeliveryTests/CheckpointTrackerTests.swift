import PushCore
import Testing
@testable import PushDelivery

struct CheckpointTrackerTests {
    private static func token(_ n: Int) -> DeviceToken { DeviceToken(trustedCanonicalHex: String(format: "%08x", n)) }

    private static func answer(_ seq: Int, _ kind: DeliveryOutcome.Kind = .accepted, retried: Bool = false, dup: Bool = false)
        -> CheckpointTracker.Answer
    {
        CheckpointTracker.Answer(seq: seq, kind: kind, retried: retried, possiblyDuplicated: dup)
    }

    @Test func theCheckpointIsTheEndOfTheLongestSettledPrefixAndAcceptedDevicesCountOnlyOnceItPassesThem() {
        let tracker = CheckpointTracker(holdAfter: 100)
        let seqs = (1...4).map { tracker.dispatch(Self.token($0), hasRow: false) }
        #expect(seqs == [0, 1, 2, 3])
        // Answers arrive out of order: 2 and 3 first, so nothing is covered and nothing counted yet.
        let first = tracker.commit([Self.answer(1, retried: true), Self.answer(2, .tokenDead)])
        #expect(first.checkpoint == nil && first.accepted == AcceptedTally() && first.released == 0)
        #expect(first.mayHaveRow == [false, false] && first.held.isEmpty)
        // Device 1 completes the prefix: the checkpoint passes 1–3; the two accepted ones are counted now.
        let second = tracker.commit([Self.answer(0, dup: true)])
        #expect(second.checkpoint == Self.token(3).hex)
        #expect(second.accepted == AcceptedTally(count: 2, retried: 1, possiblyDuplicated: 1))
        #expect(second.released == 3)
        let third = tracker.commit([Self.answer(3)])
        #expect(third.checkpoint == Self.token(4).hex && third.accepted.count == 1 && third.released == 1)
        #expect(tracker.lastDispatched == Self.token(4).hex)
    }

    @Test func aDeviceThatWaitsWhileEnoughLaterOnesSettleIsHeldAndCountedWhenItsAnswerComes() {
        let tracker = CheckpointTracker(holdAfter: 2)
        for n in 1...5 { _ = tracker.dispatch(Self.token(n), hasRow: false) }
        // Device 1 waits (say, in a retry's backoff); 2 settles: not enough to hold 1.
        let first = tracker.commit([Self.answer(1)])
        #expect(first.checkpoint == nil && first.held.isEmpty)
        // 3 settles too: 1 is held (a pending row), the checkpoint passes it and 2–3 (counted), and stops at 4.
        let second = tracker.commit([Self.answer(2)])
        #expect(second.held == [Self.token(1)])
        #expect(second.checkpoint == Self.token(3).hex)
        #expect(second.accepted.count == 2)
        // The held device keeps its slot of the ahead window: only 2 and 3 are released.
        #expect(second.released == 2)
        // Its answer replaces its row (or removes it, accepted) and is counted at once, releasing its slot; device 4
        // settles and is passed and counted in the same commit.
        let third = tracker.commit([Self.answer(0, retried: true), Self.answer(3)])
        #expect(third.mayHaveRow == [true, false])
        #expect(third.accepted == AcceptedTally(count: 2, retried: 1, possiblyDuplicated: 0))
        #expect(third.checkpoint == Self.token(4).hex && third.released == 2)
    }

    @Test func aHeldDeviceThatFailsOrStaysUnsentIsNotCountedAsAccepted() {
        let tracker = CheckpointTracker(holdAfter: 1)
        for n in 1...3 { _ = tracker.dispatch(Self.token(n), hasRow: false) }
        let held = tracker.commit([Self.answer(1), Self.answer(2)])
        #expect(held.held == [Self.token(1)] && held.checkpoint == Self.token(3).hex && held.accepted.count == 2)
        let answered = tracker.commit([Self.answer(0, .pending)])
        #expect(answered.mayHaveRow == [true] && answered.accepted.count == 0 && answered.released == 1)
        #expect(answered.checkpoint == nil)
    }

    @Test func aDeviceAnEarlierClaimLeftARowIsAnsweredAsMayHaveARow() {
        let tracker = CheckpointTracker(holdAfter: 100)
        _ = tracker.dispatch(Self.token(1), hasRow: true)
        _ = tracker.dispatch(Self.token(2), hasRow: false)
        #expect(tracker.commit([Self.answer(1), Self.answer(0)]).mayHaveRow == [false, true])
    }

    @Test func everyDeviceReleasesExactlyOneSlotAcrossAnyNumberOfCommitsAndCompactions() {
        let tracker = CheckpointTracker(holdAfter: 50)
        let n = 20_000
        var released = 0
        var accepted = 0
        var waiting: [Int] = []
        for start in stride(from: 0, to: n, by: 200) {
            for i in start..<start + 200 { _ = tracker.dispatch(Self.token(i), hasRow: false) }
            // Every 97th device waits a while (answered two commits later); the rest answer at once, in reverse.
            let now = (start..<start + 200).filter { $0 % 97 != 0 }.reversed().map { Self.answer($0) }
            let late = waiting
            waiting = (start..<start + 200).filter { $0 % 97 == 0 }
            let plan = tracker.commit(now + late.map { Self.answer($0) })
            released += plan.released
            accepted += plan.accepted.count
        }
        let plan = tracker.commit(waiting.map { Self.answer($0) })
        released += plan.released
        accepted += plan.accepted.count
        #expect(released == n)
        #expect(accepted == n)
        #expect(tracker.commit([]).checkpoint == nil)
    }
}
