import Foundation
import PushCore
import Testing

@testable import PushStore
import TestSupport

/// The ``DeliveryStore`` contract on SQLite: fenced leases on the store's clock, outcomes and checkpoint in one
/// transaction, pending markers that do not count, deferred devices for the next run, breaker state. (The
/// PostgreSQL backend is to pass the same cases.)
/// SQLite-only behaviour of the registry's delivery store (the shared contract is in ``DeliveryStoreConformanceTests``).
@Suite struct SQLiteDeliveryStoreTests {
    @Test func aLockedDatabaseIsReportedAsUnavailable() throws {
        let clock = ManualClock()
        let registry = try SQLiteRegistry(path: makeTempDirectory() + "/store.sqlite", nowMs: clock.function)
        let token = testToken(1)
        let fast = try SQLiteRegistry(path: registry.path, options: RegistryOptions(busyTimeoutMs: 50), nowMs: clock.function).deliveryStore
        let other = try Connection(path: registry.path, busyTimeoutMs: 100, synchronous: "NORMAL")
        try other.execute("BEGIN IMMEDIATE")
        defer { try? other.execute("ROLLBACK") }
        let outcome = DeliveryOutcome(token: token, kind: .accepted, notificationId: "x", status: 200, reason: nil, attempts: 1,
                                      possiblyDuplicated: false, prune: nil, startedMs: 1, finishedMs: 2)
        #expect { _ = try fast.commit(OutcomeBatch(app: "a", outcomes: [outcome])) } throws: {
            ($0 as? DeliveryStoreError)?.kind == .unavailable
        }
    }
}
