import PushCore
import Foundation
import PushLanes
import Synchronization
import Testing
import TestSupport

/// The lane for short blocking calls, and awaiting a dedicated thread's end.
@Suite(.timeLimit(.minutes(1)))
struct BlockingLaneTests {
    /// Counts calls running at once and the most seen.
    final class Gauge: Sendable {
        let state = Mutex((now: 0, most: 0))
        func enter() { state.withLock { $0.now += 1; $0.most = max($0.most, $0.now) } }
        func leave() { state.withLock { $0.now -= 1 } }
        var most: Int { state.withLock { $0.most } }
    }

    @Test func runsAtMostItsThreadsCallsAtOnceAndEveryCall() async {
        let lane = BlockingLane(name: "test-lane", threads: 2)
        let gauge = Gauge()
        let results = await withTaskGroup(of: Int?.self) { group in
            for i in 0..<8 {
                group.addTask {
                    await lane.perform {
                        gauge.enter()
                        Thread.sleep(forTimeInterval: 0.05)  // a blocking call's length, not a wait for an event
                        gauge.leave()
                        return i
                    }
                }
            }
            var all: [Int] = []
            for await r in group { if let r { all.append(r) } }
            return all.sorted()
        }
        #expect(results == Array(0..<8))
        #expect(gauge.most == 2)
    }

    @Test func aCallThatCannotStartInTimeIsRefusedAndNeverRuns() async throws {
        let lane = BlockingLane(name: "test-lane", threads: 1, maxQueueWaitMs: 50)
        let ran = Atomic<Int>(0)
        let started = ThreadEnd()
        let release = DispatchSemaphore(value: 0)
        // The blocker has the only thread before the late call is made (an event, not a head start), and holds it
        // past the queue-wait limit after the late call is made (an event too); the late call, judged when the
        // thread is free, is refused unrun.
        let blocker = Task { await lane.perform { started.signal(); release.wait(); return 1 } }
        await started.wait()
        let late = Task { await lane.perform { ran.add(1, ordering: .relaxed); return 2 } }
        // Queued first (an event: on a busy box the task may not start for a while), then kept waiting well past
        // the 50 ms limit: the time the late call waits is the subject of the test.
        try await waitUntil("the late call is queued") { lane.waitingCalls == 1 }
        try await Task.sleep(for: .milliseconds(300))
        release.signal()
        #expect(await late.value == nil)
        #expect(await blocker.value == 1)
        #expect(ran.load(ordering: .relaxed) == 0)
    }

    @Test func aFullQueueRefusesMoreCalls() async throws {
        let lane = BlockingLane(name: "test-lane", threads: 1, maxQueued: 1)
        let started = ThreadEnd()
        let release = DispatchSemaphore(value: 0)
        let first = Task { await lane.perform { started.signal(); release.wait(); return -1 } }
        await started.wait()
        // The only thread is busy: one of five calls may wait, the other four are refused at once (and only then
        // is the thread released, so a lane that queued them all would never answer).
        let outcomes = await withTaskGroup(of: Int?.self) { group in
            for i in 0..<5 { group.addTask { await lane.perform { i } } }
            var got: [Int?] = []
            for await r in group {
                got.append(r)
                if got.count == 4 { release.signal() }
            }
            return got
        }
        #expect(outcomes.filter { $0 == nil }.count == 4)
        #expect(outcomes.compactMap { $0 }.count == 1)
        #expect(await first.value == -1)
    }

    @Test func runRethrowsTheCallsError() async {
        struct Failure: Error, Equatable {}
        await #expect(throws: Failure.self) { try await BlockingLane.shared.run { () throws -> Int in throw Failure() } }
    }

    @Test func aThreadsEndIsAwaitedWithoutParkingAThread() async {
        let end = ThreadEnd()
        #expect(!end.hasEnded)
        let thread = NamedThread.start("test-end") {
            // The thread's work, so that it usually ends while the test awaits it (not a wait for an event).
            Thread.sleep(forTimeInterval: 0.05)
            end.signal()
        }
        _ = thread
        await end.wait()
        #expect(end.hasEnded)
        await end.wait()  // after the end: returns at once
        end.signal()  // a second signal changes nothing
        #expect(end.hasEnded)
    }
}
