import PushCore
import Testing
@testable import PushSender

/// When a connection's loop hands waiting jobs to libcurl: at once while the wire is nearly empty, in batches of a
/// tenth of the window once it is busy, and never later than the hold.
@Suite struct RefillCadenceTests {
    let cadence = RefillCadence(window: 500, maxConcurrentStreams: 1000)

    @Test func theBatchIsATenthOfTheWindowBoundedByTheStreamLimitAndAtLeastOne() {
        #expect(cadence.batch == 50)
        #expect(RefillCadence(window: 2000, maxConcurrentStreams: 1000).batch == 100)
        #expect(RefillCadence(window: 5, maxConcurrentStreams: 1000).batch == 1)
        #expect(RefillCadence(window: 500, maxConcurrentStreams: 1).batch == 1)
    }

    @Test func withFewTransfersOnTheWireAJobGoesAtOnce() {
        // A broadcast's start, a single send, the tail of a run: nothing to gain by holding.
        #expect(cadence.admitsNow(waiting: 1, active: 0, waitedMs: 0, stopping: false))
        #expect(cadence.admitsNow(waiting: 1, active: 49, waitedMs: 0, stopping: false))
        #expect(cadence.wakesOnSubmit(handedIn: 1, active: 49))
    }

    @Test func withABusyWireJobsWaitForABatchOrTheHold() {
        #expect(!cadence.admitsNow(waiting: 49, active: 451, waitedMs: 19, stopping: false))
        #expect(cadence.admitsNow(waiting: 50, active: 450, waitedMs: 0, stopping: false))
        #expect(cadence.admitsNow(waiting: 1, active: 499, waitedMs: 20, stopping: false))
        #expect(!cadence.wakesOnSubmit(handedIn: 49, active: 451))
        #expect(cadence.wakesOnSubmit(handedIn: 50, active: 450))
    }

    @Test func stoppingHandsEverythingOverAndNothingWaitingAdmitsNothing() {
        #expect(cadence.admitsNow(waiting: 1, active: 499, waitedMs: 0, stopping: true))
        #expect(!cadence.admitsNow(waiting: 0, active: 0, waitedMs: 100, stopping: true))
    }
}
