import Dispatch
import Foundation
import Logging
import PushCore

/// Runs ``DeliveryStore`` calls off Swift's cooperative thread pool (they block on I/O and locks) and waits
/// out a transient failure: ``DeliveryStoreError/Code/unavailable`` is retried with capped backoff until
/// `outageLimitMs` have passed since the call began (a locked SQLite file blocks each attempt for its busy
/// timeout), then thrown. Other errors are thrown at once.
final class StoreAccess: Sendable {
    let store: DeliveryStore
    let outageLimitMs: Int
    let logger: Logger
    private let queue = DispatchQueue(label: "PushDelivery.store", attributes: .concurrent)

    init(store: DeliveryStore, outageLimitMs: Int, logger: Logger) {
        self.store = store
        self.outageLimitMs = outageLimitMs
        self.logger = logger
    }

    /// `body` on the store queue, with transient failures retried.
    /// With `retry` false, one attempt only (best-effort writes after the run already stopped).
    func run<T: Sendable>(
        _ what: String, retry: Bool = true, _ body: @escaping @Sendable (DeliveryStore) throws(DeliveryStoreError) -> T
    ) async throws(DeliveryStoreError) -> T {
        let result: Result<T, DeliveryStoreError> = await withCheckedContinuation { continuation in
            queue.async { [self] in
                continuation.resume(returning: Result { () throws(DeliveryStoreError) -> T in
                    retry ? try blocking(what, body) : try body(store)
                })
            }
        }
        return try result.get()
    }

    /// Waits on the store queue until shards may be claimable or `timeoutMs` pass (see ``DeliveryStore/waitForWork(timeoutMs:)``).
    func waitForWork(timeoutMs: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async { [self] in
                store.waitForWork(timeoutMs: timeoutMs)
                continuation.resume()
            }
        }
    }

    /// `body` on the calling thread (which must not be a cooperative one), with transient failures retried.
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
                guard error.code == .unavailable else { throw error }
                let now = DispatchTime.now()
                failures += 1
                let elapsedMs = Int((now.uptimeNanoseconds - since.uptimeNanoseconds) / 1_000_000)
                if elapsedMs >= outageLimitMs {
                    throw DeliveryStoreError(
                        .unavailable,
                        "\(what) failed for \(elapsedMs / 1000) s (database outage limit \(outageLimitMs / 1000) s): \(error.message)")
                }
                if failures == 1 {
                    logger.warning("the database is unavailable; retrying", metadata: ["operation": "\(what)", "error": "\(error.message)"])
                }
                let delayMs = min(5000, 50 << min(failures, 7), max(1, outageLimitMs - elapsedMs))
                Thread.sleep(forTimeInterval: Double(delayMs) / 1000)
            }
        }
    }
}
