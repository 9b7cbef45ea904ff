import Foundation
import PushProviderClient
import Testing

/// The Live Activity outbox's collapsing, through ``Installation`` with no server at all (port 9 on loopback:
/// every call stays pending), so the queue the app would send later is what is checked.
@Suite struct LiveActivityChangeTests {
    static func offline(_ state: URL) throws -> Installation {
        try Installation(
            configuration: ClientConfiguration(serverURL: URL(string: "http://127.0.0.1:9")!, app: "example", registrationKey: "k"),
            stateDirectory: state, facts: DeviceFacts(), retry: RetryPolicy(maxAttempts: 1))
    }

    @Test func newerChangesSupersedeOlderOnesAboutTheSameThingAndTheRestKeepTheirOrder() async throws {
        let state = InstallationTests.stateDirectory()
        defer { try? FileManager.default.removeItem(at: state) }
        let app = try Self.offline(state)
        let t = { (i: Int) in InstallationTests.bytes(InstallationTests.token(i)) }
        _ = try await app.registerPushToStartToken(t(1), attributesType: "Score")
        _ = try await app.registerUpdateToken(t(2), activityId: "a")
        _ = try await app.registerPushToStartToken(t(3), attributesType: "Delivery")
        _ = try await app.registerUpdateToken(t(4), activityId: "b")
        _ = try await app.registerPushToStartToken(t(5), attributesType: "Score")  // supersedes t(1)
        _ = try await app.registerUpdateToken(t(6), activityId: "b")  // supersedes t(4)
        _ = try await app.activityEnded(activityId: "a")  // drops t(2)'s registration, unsent
        let queued = await app.pendingLiveActivityChanges.map(\.kind)
        #expect(queued == [
            .pushToStartToken(token: InstallationTests.token(3), attributesType: "Delivery", channels: []),
            .pushToStartToken(token: InstallationTests.token(5), attributesType: "Score", channels: []),
            .updateToken(token: InstallationTests.token(6), activityId: "b", attributesType: nil),
            .activityEnded(activityId: "a"),
        ])
        // And they survive a relaunch, in the same order.
        #expect(try await Self.offline(state).pendingLiveActivityChanges.map(\.kind) == queued)
    }
}
