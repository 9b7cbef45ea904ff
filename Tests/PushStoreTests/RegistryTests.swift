import Foundation
import PushCore
import Testing

@testable import PushStore
import TestSupport

/// SQLite-only behaviour of ``SQLiteRegistry`` itself (the contract both backends share is in
/// ``RegistryConformanceTests``).
@Suite struct RegistryTests {
    private func walSize(_ path: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path + "-wal"))?[.size] as? Int
    }

    private func register(_ count: Int, in registry: SQLiteRegistry, salt: UInt64 = 0) {
        let requests = (0..<count).map { RegistrationRequest(app: "a", token: testToken($0, salt: salt), environment: .production) }
        for result in registry.registerBatch(requests) { _ = try? result.get() }
    }

    @Test func aCommandThatWroteLittleLeavesItsWALForTheNextWithEveryCommitInIt() throws {
        let path = makeTempDirectory() + "/registry.sqlite"
        do {
            let registry = try SQLiteRegistry(path: path, options: .command)
            register(3, in: registry)
        }
        // Closed without a checkpoint: the WAL is still there (under the limit) and holds the commits.
        let size = try #require(walSize(path))
        #expect(size > 0 && size < SQLiteRegistry.walKeptOnCloseBytes)
        let reopened = try SQLiteRegistry(path: path)
        #expect(try reopened.count(app: "a", channel: nil, environment: nil) == 3)
    }

    @Test func aCommandsLargeWALIsCheckpointedIntoTheDatabaseWhenTheRegistryCloses() throws {
        let path = makeTempDirectory() + "/registry.sqlite"
        do {
            let registry = try SQLiteRegistry(path: path, options: .command)
            register(6_000, in: registry)
            #expect((walSize(path) ?? 0) >= SQLiteRegistry.walKeptOnCloseBytes)
        }
        // Checkpointed and deleted: the database file alone now holds every device.
        #expect(walSize(path) == nil)
        let reopened = try SQLiteRegistry(path: path)
        #expect(try reopened.count(app: "a", channel: nil, environment: nil) == 6_000)
    }

    @Test func byDefaultEvenASmallWALIsCheckpointedOnClose() throws {
        // A server (the default options) leaves one self-contained file when it stops.
        let path = makeTempDirectory() + "/registry.sqlite"
        do {
            let registry = try SQLiteRegistry(path: path)
            register(3, in: registry)
            #expect((walSize(path) ?? 0) > 0)
        }
        #expect(walSize(path) == nil)
        let reopened = try SQLiteRegistry(path: path)
        #expect(try reopened.count(app: "a", channel: nil, environment: nil) == 3)
    }
}
