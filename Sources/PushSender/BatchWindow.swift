import Foundation

/// Bounds the notifications in flight (sent or waiting for a retry) during a batch run. The producer
/// suspends when the window is full and resumes once a quarter of it has drained, so it is not woken
/// once per completed notification.
final class BatchWindow: @unchecked Sendable {
    private let limit: Int
    private let resumeBelow: Int
    private let lock = NSLock()
    private var inFlight = 0
    private var producer: CheckedContinuation<Void, Never>?
    private var drainer: CheckedContinuation<Void, Never>?

    init(limit: Int) {
        self.limit = max(1, limit)
        resumeBelow = max(0, self.limit - max(1, self.limit / 4))
    }

    /// Takes one slot, suspending while the window is full.
    func acquire() async {
        while !tryTake() {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                lock.lock()
                if inFlight < limit {
                    lock.unlock()
                    c.resume()
                } else {
                    producer = c
                    lock.unlock()
                }
            }
        }
    }

    private func tryTake() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard inFlight < limit else { return false }
        inFlight += 1
        return true
    }

    /// Returns one slot (called on the transport thread when a notification is final).
    func release() {
        lock.lock()
        inFlight -= 1
        var wake: CheckedContinuation<Void, Never>?
        if let p = producer, inFlight <= resumeBelow {
            wake = p
            producer = nil
        }
        var drained: CheckedContinuation<Void, Never>?
        if inFlight == 0, let d = drainer {
            drained = d
            drainer = nil
        }
        lock.unlock()
        wake?.resume()
        drained?.resume()
    }

    /// Waits until every slot is back.
    func drain() async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            lock.lock()
            if inFlight == 0 {
                lock.unlock()
                c.resume()
            } else {
                drainer = c
                lock.unlock()
            }
        }
    }
}
