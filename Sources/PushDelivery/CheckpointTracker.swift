import Synchronization

/// Tracks which tokens of the main pass have a committed outcome. Tokens are handed to the sender in key
/// order, so the checkpoint — every token up to it has a committed outcome — is the end of the longest
/// committed prefix. The committer asks what the checkpoint *would* be with a batch, commits, and only then
/// records the batch: the checkpoint never runs ahead of the outcomes it covers.
final class CheckpointTracker: Sendable {
    private struct State {
        var dispatched: [String] = []
        var head = 0
        var committed = Set<String>()
        var last = ""
    }

    private let state = Mutex(State())

    /// Notes a token handed to the sender (in key order).
    func dispatch(_ token: String) {
        state.withLock {
            $0.dispatched.append(token)
            $0.last = token
        }
    }

    /// The last token handed to the sender ("" if none).
    var lastDispatched: String { state.withLock { $0.last } }

    /// The checkpoint after committing `tokens`, or nil when it would not move. Changes nothing.
    func checkpoint(committing tokens: [String]) -> String? {
        state.withLock { s in
            let adding = Set(tokens)
            var i = s.head
            var moved: String?
            while i < s.dispatched.count, s.committed.contains(s.dispatched[i]) || adding.contains(s.dispatched[i]) {
                moved = s.dispatched[i]
                i += 1
            }
            return moved
        }
    }

    /// Records `tokens` as committed.
    func committed(_ tokens: [String]) {
        state.withLock { s in
            s.committed.formUnion(tokens)
            while s.head < s.dispatched.count, s.committed.remove(s.dispatched[s.head]) != nil { s.head += 1 }
            if s.head > 4096 && s.head * 2 > s.dispatched.count {
                s.dispatched.removeFirst(s.head)
                s.head = 0
            }
        }
    }
}
