import PushCore
import Testing

/// `--rate` as one schedule per broadcast (``Pacer``): what each reservation waits and where it leaves the schedule.
struct PacerTests {
    @Test func backToBackReservationsKeepTheRate() {
        var next = 0.0
        var now = 0.0
        for _ in 0..<50 {
            let (wait, moved) = Pacer.reserve(count: 10, perSecond: 100, nextMs: next, nowMs: now)
            now += wait  // the caller sends its 10 once the wait is over
            next = moved
        }
        // 500 notifications at 100/s: the last 10 may go once 490 notifications' worth of time (4.9 s) has passed.
        #expect(abs(now - 4900) < 1e-6)
        #expect(abs(next - 5000) < 1e-6)
    }

    @Test func processesSharingTheScheduleAddUpToTheRateNotAMultipleOfIt() {
        // Three processes reserve in turn at the same instant, on a schedule stored at that instant: they queue up
        // behind each other.
        var next = 1000.0
        var waits: [Double] = []
        for _ in 0..<3 {
            let (wait, moved) = Pacer.reserve(count: 50, perSecond: 500, nextMs: next, nowMs: 1000)
            waits.append(wait)
            next = moved
        }
        #expect(waits == [0, 100, 200])
        #expect(next == 1300)
    }

    @Test func anIdleScheduleSavesUpNoMoreThanOneSecond() {
        // Last reservation long ago: the next may start at most a second in the past (a burst of a second's worth)…
        let (wait, moved) = Pacer.reserve(count: 10, perSecond: 100, nextMs: 1000, nowMs: 60_000)
        #expect(wait == 0)
        #expect(moved == 59_100)
        // …so a short gap (a process moving to its next shard, a stalled process) costs no rate.
        let afterGap = Pacer.reserve(count: 10, perSecond: 100, nextMs: 59_600, nowMs: 60_000)
        #expect(afterGap.waitMs == 0 && afterGap.nextMs == 59_700)
    }

    @Test func givingBackUnsentNotificationsNeverMovesTheScheduleBeforeNow() {
        let (wait, moved) = Pacer.reserve(count: -20, perSecond: 100, nextMs: 5000, nowMs: 4900)
        #expect(wait == 0)
        #expect(moved == 4900)  // 5000 - 200 would be in the past
        #expect(Pacer.reserve(count: -5, perSecond: 100, nextMs: 5000, nowMs: 4000).nextMs == 4950)
    }

    @Test func aChunkIsATenthOfASecondBetweenOneAnd250() {
        #expect(Pacer.chunk(perSecond: 500) == 50)
        #expect(Pacer.chunk(perSecond: 3) == 1)
        #expect(Pacer.chunk(perSecond: 100_000) == 250)
    }
}
