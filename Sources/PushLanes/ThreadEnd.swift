import Synchronization

/// The end of a dedicated thread (or any one-time event), awaited without parking a thread: the thread calls
/// ``signal()`` as its last act, and ``wait()`` suspends its caller until then (or returns at once when it already
/// happened). Replaces a semaphore that some thread — a `DispatchQueue.global()` worker — had to block on.
public final class ThreadEnd: Sendable {
    private let state = Mutex<(ended: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    /// A thread that has not ended yet.
    public init() {}

    /// Marks the end (once; later calls do nothing) and resumes every waiter.
    public func signal() {
        let waiters = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            guard !s.ended else { return [] }
            s.ended = true
            let all = s.waiters
            s.waiters.removeAll()
            return all
        }
        for waiter in waiters { waiter.resume() }
    }

    /// True once ``signal()`` was called.
    public var hasEnded: Bool { state.withLock { $0.ended } }

    /// Returns once ``signal()`` was called.
    public func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { s -> Bool in
                if s.ended { return true }
                s.waiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }
}
