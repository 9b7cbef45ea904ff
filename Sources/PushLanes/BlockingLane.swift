import Dispatch
import Foundation

/// The one way async code hands off a short blocking call (a store query, reading and decrypting credentials, a
/// channel-management request): a bounded set of named threads that run the calls in order, so the caller awaits
/// the result without blocking one of Swift's cooperative threads. Dedicated long-lived loops (a connection's curl
/// thread, the outcome committer) keep their own thread; their end is awaited with ``ThreadEnd``.
///
/// Bounded twice. At most ``threads`` threads run calls, started as calls arrive (a lane that is never used
/// costs none) and kept until the lane goes away. A call that has not *started* within ``maxQueueWaitMs`` (when
/// set) is not run and comes back nil, and so does a call that finds ``maxQueued`` others already waiting: a
/// stuck resource turns into quick refusals instead of a growing queue.
public final class BlockingLane: Sendable {
    /// Shown as the threads' names (`top -H`, `/proc/PID/task/*/comm`).
    public let name: String
    /// At most this many threads run calls.
    public let threads: Int
    /// How long a call may wait for a thread before it is refused (nil: as long as it takes).
    public let maxQueueWaitMs: Int?
    /// How many calls may wait for a thread at once before more are refused.
    public let maxQueued: Int
    private let queue: Queue

    /// The process's lane for rare, short blocking calls outside the store: credentials (file reads, PKCS#12 key
    /// derivation) and channel-management requests. Four threads: these are one-off administrative calls, a few at
    /// once at most (a server starting one sender per app, a console listing channels), and more of them at once
    /// should queue rather than start threads without bound. No queue-wait limit: a caller wants the answer, and
    /// each call bounds itself (libcurl timeouts, a file read).
    public static let shared = BlockingLane(name: "pushctl-lane", threads: 4)

    /// A lane of up to `threads` threads named `name`.
    public init(name: String, threads: Int, maxQueueWaitMs: Int? = nil, maxQueued: Int = 1024) {
        self.name = name
        self.threads = max(1, threads)
        self.maxQueueWaitMs = maxQueueWaitMs.map { max(1, $0) }
        self.maxQueued = max(1, maxQueued)
        queue = Queue(name: name, limit: self.threads)
    }

    deinit {
        // Not waited for: the last reference may go away on one of the lane's own threads. Calls still queued
        // come back nil; then the threads end.
        queue.stop()
    }

    /// The busy rule, once: a call queued at `queuedNs` (uptime) that has waited longer than ``maxQueueWaitMs`` does
    /// not run. Whatever queues calls in front of a lane (``RegistrationBatcher`` in front of the store's) asks it too.
    public func waitedTooLong(queuedNs: UInt64, nowNs: UInt64 = DispatchTime.now().uptimeNanoseconds) -> Bool {
        guard let maxQueueWaitMs else { return false }
        return nowNs &- queuedNs > UInt64(maxQueueWaitMs) * 1_000_000
    }

    /// How many calls wait for a thread right now (queued, not yet started): what a caller that must know a call
    /// is queued — a test of the queue-wait limit, a health probe — reads instead of guessing with a sleep.
    public var waitingCalls: Int { queue.waiting }

    /// Runs `body` on one of the lane's threads and returns its result; nil when it could not start in time or
    /// the queue was full (and then it did not run). A call is never abandoned once started.
    public func perform<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T? {
        let since = DispatchTime.now().uptimeNanoseconds
        let maxQueued = self.maxQueued
        return await withCheckedContinuation { (continuation: CheckedContinuation<T?, Never>) in
            let accepted = queue.submit(maxQueued: maxQueued) { stopping in
                if stopping { return continuation.resume(returning: nil) }
                if self.waitedTooLong(queuedNs: since) { return continuation.resume(returning: nil) }
                continuation.resume(returning: body())
            }
            if !accepted { continuation.resume(returning: nil) }
        }
    }

    /// Runs a throwing `body` on one of the lane's threads; throws its error, or ``Busy`` when it could not start.
    public func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        let result = await perform { () -> Result<T, any Error> in Result { try body() } }
        guard let result else { throw Busy(lane: name) }
        return try result.get()
    }

    /// A call ``run(_:)`` could not start: no thread was free in time, or too many calls were waiting.
    public struct Busy: Error, CustomStringConvertible {
        /// The lane's name.
        public let lane: String
        public var description: String { "no \(lane) thread was free in time" }
    }

    /// The calls waiting for a thread and the threads that run them, guarded by `condition` (a condition
    /// variable: idle threads sleep on it, which `Mutex` cannot do). Threads hold this, not the lane, so the
    /// lane's deinit can stop them.
    private final class Queue: @unchecked Sendable {
        let name: String
        let limit: Int
        let condition = NSCondition()
        var jobs = FIFO<@Sendable (_ stopping: Bool) -> Void>()
        var running = 0
        var idle = 0
        var stopping = false

        init(name: String, limit: Int) {
            self.name = name
            self.limit = limit
        }

        /// Queues `job`, starting a thread when every running one is busy and the limit allows. False when the
        /// queue is full or the lane is gone.
        func submit(maxQueued: Int, _ job: @escaping @Sendable (_ stopping: Bool) -> Void) -> Bool {
            condition.lock()
            let waiting = jobs.count
            guard waiting < maxQueued, !stopping else {
                condition.unlock()
                return false
            }
            jobs.append(job)
            let spawn = waiting + 1 > idle && running < limit
            if spawn { running += 1 }
            condition.signal()
            condition.unlock()
            if spawn { NamedThread.start(name) { self.work() } }
            return true
        }

        /// Calls queued and not yet taken by a thread.
        var waiting: Int {
            condition.lock()
            defer { condition.unlock() }
            return jobs.count
        }

        func stop() {
            condition.lock()
            stopping = true
            condition.broadcast()
            condition.unlock()
        }

        private func work() {
            condition.lock()
            while true {
                while jobs.isEmpty, !stopping {
                    idle += 1
                    condition.wait()
                    idle -= 1
                }
                guard let job = jobs.popFirst() else { break }
                let stopped = stopping
                condition.unlock()
                job(stopped)
                condition.lock()
            }
            running -= 1
            condition.unlock()
        }
    }
}
