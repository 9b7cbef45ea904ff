import Testing
@testable import PushDelivery

struct CheckpointTrackerTests {
    @Test func theCheckpointIsTheEndOfTheLongestCommittedPrefixAndMovesOnlyOnCommit() {
        let tracker = CheckpointTracker()
        for token in ["a1", "a2", "a3", "a4"] { tracker.dispatch(token) }
        // Outcomes arrive out of order: a2 and a3 first, so nothing is covered yet.
        #expect(tracker.checkpoint(committing: ["a2", "a3"]) == nil)
        tracker.committed(["a2", "a3"])
        // Asking does not move it: a batch that fails to commit never advances the checkpoint.
        #expect(tracker.checkpoint(committing: ["a1"]) == "a3")
        #expect(tracker.checkpoint(committing: []) == nil)
        tracker.committed(["a1"])
        #expect(tracker.checkpoint(committing: ["a4"]) == "a4")
        #expect(tracker.lastDispatched == "a4")
    }
}
