import Dispatch
import Foundation
import Logging
import PushCore

/// Runs ``DeliveryStore`` calls on the store's own bounded thread pool (``DeliveryStore/perform(_:)``: they block on
/// I/O and locks, so never on Swift's cooperative pool) and waits out a transient failure:
/// ``DeliveryStoreError/Code/unavailable`` is retried with capped backoff until `outageLimitMs` have passed since
/// the call began (a locked SQLite file blocks each attempt for its busy timeout), then thrown. Other errors are
/// thrown at once.
final class StoreAccess: Sendable {
    /// The waits between attempts: from 100 ms doubling to 5 s, half of each random so the processes that share
    /// a database do not retry in step.
    static let backoff = BackoffPolicy(baseMs: 100, capMs: 5000, jitter: 0.5)

    let store: DeliveryStore
    let outageLimitMs: Int
    let logger: Logger
    /// Uniform in [0, 1): the backoff's jitter.
    let random: @Sendable () -> Double

    init(store: DeliveryStore, outageLimitMs: Int, logger: Logger, random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }) {
        self.store = store
        self.outageLimitMs = outageLimitMs
        self.logger = logger
        self.random = random
    }

    /// `body` on the store's thread pool, with transient failures retried (the waits between attempts hold no
    /// thread). With `retry` false, one attempt only (best-effort writes after the run already stopped).
    func run<T: Sendable>(
        _ what: String, retry: Bool = true, _ body: @escaping @Sendable (DeliveryStore) throws(DeliveryStoreError) -> T
    ) async throws(DeliveryStoreError) -> T {
        let since = DispatchTime.now()
        var failures = 0
        let store = self.store
        while true {
            let attempt = await store.perform { Result { () throws(DeliveryStoreError) -> T in try body(store) } }
                ?? .failure(DeliveryStoreError(.unavailable, "no store thread was free in time"))
            switch attempt {
            case .success(let value):
                if failures > 0 {
                    logger.notice("the database is available again", metadata: ["operation": "\(what)", "failures": "\(failures)"])
                }
                return value
            case .failure(let failure):
                guard retry, let delayMs = nextDelay(after: failure, failures: &failures, since: since, what: what) else {
                    throw limited(failure, since: since, what: what, retry: retry)
                }
                // A cancelled caller (a prefetch no longer wanted) stops retrying rather than spinning.
                do { try await Task.sleep(for: .milliseconds(delayMs)) } catch { throw failure }
            }
        }
    }

    /// Waits until shards may be claimable or `timeoutMs` pass (see ``DeliveryStore/waitForWork(timeoutMs:)``).
    func waitForWork(timeoutMs: Int) async {
        await store.waitForWork(timeoutMs: timeoutMs)
    }

    /// `body` on the calling thread (which must not be a cooperative one: the outcome committer's own thread),
    /// with transient failures retried.
    @available(*, noasync, message: "blocks the calling thread: use run(_:retry:_:)")
    func blocking<T>(_ what: String, _ body: (DeliveryStore) throws(DeliveryStoreError) -> T) throws(DeliveryStoreError) -> T {
        let since = DispatchTime.now()
        var failures = 0
        while true {
            do {
                let value = try body(store)
                if failures > 0 {
                    logger.notice("the database is available again", metadata: ["operation": "\(what)", "failures": "\(failures)"])
                }
                return value
            } catch {
                guard let delayMs = nextDelay(after: error, failures: &failures, since: since, what: what) else {
                    throw limited(error, since: since, what: what, retry: true)
                }
                Thread.sleep(forTimeInterval: Double(delayMs) / 1000)
            }
        }
    }

    /// The wait before the next attempt after `error`, or nil when it is not to be retried (not transient, or the
    /// outage limit has passed).
    private func nextDelay(after error: DeliveryStoreError, failures: inout Int, since: DispatchTime, what: String) -> Int? {
        guard error.kind == .unavailable else { return nil }
        failures += 1
        let elapsedMs = Self.elapsedMs(since: since)
        if elapsedMs >= outageLimitMs { return nil }
        if failures == 1 {
            logger.warning("the database is unavailable; retrying", metadata: ["operation": "\(what)", "error": "\(error.message)"])
        }
        return max(1, min(Self.backoff.delayMs(failedAttempts: failures, random: random()), outageLimitMs - elapsedMs))
    }

    /// `error` as thrown: a transient failure that outlasted the outage limit says so.
    private func limited(_ error: DeliveryStoreError, since: DispatchTime, what: String, retry: Bool) -> DeliveryStoreError {
        guard retry, error.kind == .unavailable else { return error }
        let elapsedMs = Self.elapsedMs(since: since)
        return DeliveryStoreError(
            .unavailable,
            "\(what) failed for \(elapsedMs / 1000) s (database outage limit \(outageLimitMs / 1000) s): \(error.message)")
    }

    private static func elapsedMs(since: DispatchTime) -> Int {
        Int((DispatchTime.now().uptimeNanoseconds - since.uptimeNanoseconds) / 1_000_000)
    }
}
