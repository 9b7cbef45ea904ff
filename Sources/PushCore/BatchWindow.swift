import Synchronization

/// Bounds the notifications in flight (sent, waiting for a retry, or — in the delivery engine — waiting for
/// their outcome to be committed). The producer suspends when the window is full and resumes once a quarter
/// of it has drained, so it is not woken once per completed notification.
package final class BatchWindow: Sendable {
    private let limit: Int
    private let resumeBelow: Int
    private let state = Mutex(State())

    private struct State {
        var inFlight = 0
        var open = false
        var producer: CheckedContinuation<Void, Never>?
        var drainer: CheckedContinuation<Void, Never>?
    }

    /// How many slots the window has.
    package var capacity: Int { limit }

    /// A window of `limit` slots whose producer, once the window was full, resumes when `resumeAfter` slots
    /// came back (default a quarter of them: fewer wake-ups; the delivery engine's in-flight window resumes sooner,
    /// so a window that waits a long round trip for its answers stays full).
    package init(limit: Int, resumeAfter: Int? = nil) {
        self.limit = max(1, limit)
        resumeBelow = max(0, self.limit - max(1, min(self.limit, resumeAfter ?? self.limit / 4)))
    }

    /// Takes one slot, suspending while the window is full.
    package func acquire() async {
        while !tryTake() {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { s -> Bool in
                    if s.inFlight < limit || s.open { return true }
                    s.producer = c
                    return false
                }
                if resumeNow { c.resume() }
            }
        }
    }

    /// Takes one slot if the window has one, without suspending: the delivery engine's loop tries this first, as
    /// calling the `async` ``acquire()`` costs a task frame and an executor check per device even when it does
    /// not wait.
    package func tryAcquire() -> Bool { tryTake() }

    private func tryTake() -> Bool {
        state.withLock { s in
            guard s.inFlight < limit || s.open else { return false }
            s.inFlight += 1
            return true
        }
    }

    /// Returns one slot.
    package func release() { release(1) }

    /// Returns `count` slots at once (the delivery engine releases a committed batch).
    package func release(_ count: Int) {
        guard count > 0 else { return }
        let (wake, drained) = state.withLock { s -> (CheckedContinuation<Void, Never>?, CheckedContinuation<Void, Never>?) in
            s.inFlight -= count
            // The counts first: a waiting producer is copied out only when it is woken (a release per device found
            // it waiting, and copied it, most of the time).
            var wake: CheckedContinuation<Void, Never>?
            if s.inFlight <= resumeBelow, s.producer != nil { swap(&wake, &s.producer) }
            var drained: CheckedContinuation<Void, Never>?
            if s.inFlight == 0, s.drainer != nil { swap(&drained, &s.drainer) }
            return (wake, drained)
        }
        wake?.resume()
        drained?.resume()
    }

    /// Stops bounding: every later ``acquire()`` returns at once, and a waiting producer resumes (the delivery
    /// engine's committer failed and will give no more slots back; the run drains and stops).
    package func open() {
        let wake = state.withLock { s -> CheckedContinuation<Void, Never>? in
            s.open = true
            defer { s.producer = nil }
            return s.producer
        }
        wake?.resume()
    }

    /// Waits until every slot is back.
    package func drain() async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let done = state.withLock { s -> Bool in
                if s.inFlight == 0 { return true }
                s.drainer = c
                return false
            }
            if done { c.resume() }
        }
    }
}
