import Foundation
import PushCore
import Testing

@testable import PushStore
import TestSupport

/// Live Activity tokens on both backends: push-to-start tokens per installation and attributes type, update
/// tokens per activity, replacement, filters, ending an activity, and 410 prunes gated like a device's.
@Suite struct LiveActivityConformanceTests {
    private func start(_ token: DeviceToken, installation: String = "inst-1", type: String = "ScoreAttributes", channels: [String]? = nil)
        -> LiveActivityRegistration
    {
        LiveActivityRegistration(
            app: "a", token: token, kind: .pushToStart, environment: .development, installation: installation,
            attributesType: type, channels: channels)
    }

    private func update(_ token: DeviceToken, activity: String = "act-1") -> LiveActivityRegistration {
        LiveActivityRegistration(app: "a", token: token, kind: .update, environment: .production, activityId: activity)
    }

    @Test(arguments: Backend.allCases) func newPushToStartTokenReplacesTheInstallationsOldOneForTheSameType(_ backend: Backend) throws {
        let clock = ManualClock()
        let registry = try backend.open(clock: clock)
        #expect(try registry.registerLiveActivityToken(start(testToken(1))) == .created)
        #expect(try registry.registerLiveActivityToken(start(testToken(1))) == .updated)
        // Another type on the same installation is a separate token.
        #expect(try registry.registerLiveActivityToken(start(testToken(2), type: "RideAttributes")) == .created)
        clock.advance(10)
        #expect(try registry.registerLiveActivityToken(start(testToken(3))) == .replaced(testToken(1)))
        let all = try registry.allLiveActivityTokens(LiveActivityTokenQuery(app: "a", kind: .pushToStart))
        #expect(all.map(\.token) == [testToken(2), testToken(3)])
        let score = try registry.allLiveActivityTokens(LiveActivityTokenQuery(app: "a", kind: .pushToStart, attributesType: "ScoreAttributes"))
        #expect(score.count == 1)
        #expect(score[0].token == testToken(3) && score[0].installation == "inst-1" && score[0].environment == .development)
        #expect(score[0].lastRegisteredMs == clock.now)
        // Update tokens are a different kind: not listed with push-to-start tokens.
        try registry.registerLiveActivityToken(update(testToken(4)))
        #expect(try registry.allLiveActivityTokens(LiveActivityTokenQuery(app: "a", kind: .pushToStart)).count == 2)
        #expect(try registry.allLiveActivityTokens(LiveActivityTokenQuery(app: "a", kind: .update)).map(\.token) == [testToken(4)])
    }

    @Test(arguments: Backend.allCases) func pushToStartTokensFilterByChannelEnvironmentAndInstallation(_ backend: Backend) throws {
        let registry = try backend.open()
        try registry.registerLiveActivityToken(start(testToken(1), installation: "i1", channels: ["fans", "news"]))
        try registry.registerLiveActivityToken(start(testToken(2), installation: "i2", channels: ["news"]))
        var prod = start(testToken(3), installation: "i3")
        prod.environment = .production
        try registry.registerLiveActivityToken(prod)
        let fans = try registry.allLiveActivityTokens(LiveActivityTokenQuery(app: "a", kind: .pushToStart, channel: "fans"))
        #expect(fans.map(\.token) == [testToken(1)] && fans[0].channels == ["fans", "news"])
        #expect(try registry.allLiveActivityTokens(LiveActivityTokenQuery(app: "a", kind: .pushToStart, channel: "news")).count == 2)
        #expect(try registry.allLiveActivityTokens(LiveActivityTokenQuery(app: "a", kind: .pushToStart, channel: "new")).isEmpty)
        #expect(try registry.allLiveActivityTokens(LiveActivityTokenQuery(app: "a", kind: .pushToStart, environment: .production)).map(\.token) == [testToken(3)])
        #expect(try registry.allLiveActivityTokens(LiveActivityTokenQuery(app: "a", kind: .pushToStart, installation: "i2")).map(\.token) == [testToken(2)])
        #expect(try registry.allLiveActivityTokens(LiveActivityTokenQuery(app: "b", kind: .pushToStart)).isEmpty)
    }

    @Test(arguments: Backend.allCases) func pagesAreKeysetOrderedAndComplete(_ backend: Backend) throws {
        let registry = try backend.open()
        for i in 1...25 { try registry.registerLiveActivityToken(start(testToken(i), installation: "i\(i)")) }
        let all = try registry.allLiveActivityTokens(LiveActivityTokenQuery(app: "a", kind: .pushToStart), pageSize: 7)
        #expect(all.count == 25)
        #expect(all.map(\.token.hex) == all.map(\.token.hex).sorted())
    }

    @Test(arguments: Backend.allCases) func anActivityHasOneUpdateTokenAndEndingItRemovesIt(_ backend: Backend) throws {
        let registry = try backend.open()
        #expect(try registry.registerLiveActivityToken(update(testToken(1))) == .created)
        #expect(try registry.registerLiveActivityToken(update(testToken(2))) == .replaced(testToken(1)))
        try registry.registerLiveActivityToken(update(testToken(3), activity: "act-2"))
        let one = try registry.allLiveActivityTokens(LiveActivityTokenQuery(app: "a", kind: .update, activityId: "act-1"))
        #expect(one.map(\.token) == [testToken(2)] && one[0].activityId == "act-1")
        #expect(try registry.endActivity(app: "a", activityId: "act-1") == 1)
        #expect(try registry.allLiveActivityTokens(LiveActivityTokenQuery(app: "a", kind: .update, activityId: "act-1")).isEmpty)
        #expect(try registry.allLiveActivityTokens(LiveActivityTokenQuery(app: "a", kind: .update)).map(\.token) == [testToken(3)])
        #expect(try registry.unregisterLiveActivityToken(app: "a", token: testToken(3)))
        #expect(try !registry.unregisterLiveActivityToken(app: "a", token: testToken(3)))
    }

    @Test(arguments: Backend.allCases) func invalidRegistrationsAreRefusedNamingTheField(_ backend: Backend) throws {
        let registry = try backend.open()
        var noInstallation = start(testToken(1))
        noInstallation.installation = nil
        var badType = start(testToken(1))
        badType.attributesType = "Score Attributes"
        var updateWithoutActivity = update(testToken(1))
        updateWithoutActivity.activityId = nil
        var badChannel = start(testToken(1))
        badChannel.channels = ["no spaces"]
        for (request, field) in [(noInstallation, "installation"), (badType, "attributesType"), (updateWithoutActivity, "activityId"), (badChannel, "channel")] {
            let error = #expect(throws: StoreError.self) { try registry.registerLiveActivityToken(request) }
            #expect(error?.code == .invalidInput)
            #expect(error?.message.contains(field) == true, "\(error?.message ?? "")")
        }
        #expect(try registry.allLiveActivityTokens(LiveActivityTokenQuery(app: "a", kind: .pushToStart)).isEmpty)
    }

    @Test(arguments: Backend.allCases) func a410PrunesALiveActivityTokenUnlessRegisteredAgainAfterIt(_ backend: Backend) throws {
        let clock = ManualClock()
        let registry = try backend.open(clock: clock)
        try registry.registerLiveActivityToken(update(testToken(1)))
        let registeredAt = clock.now
        clock.advance(100)
        // APNs saw the token invalid before it was registered again: kept.
        #expect(try registry.prune(app: "a", token: testToken(1), PruneRequest(reason: .unregistered, apnsTimestampMs: registeredAt - 1)) == .skippedNewerRegistration)
        #expect(try registry.allLiveActivityTokens(LiveActivityTokenQuery(app: "a", kind: .update)).count == 1)
        #expect(try registry.prune(app: "a", token: testToken(1), PruneRequest(reason: .unregistered, apnsTimestampMs: clock.now)) == .deleted)
        #expect(try registry.allLiveActivityTokens(LiveActivityTokenQuery(app: "a", kind: .update)).isEmpty)
        let log = try registry.pruneLog(app: "a", limit: 10)
        #expect(log.map(\.outcome) == [.deleted, .skippedNewerRegistration])
        #expect(try registry.prune(app: "a", token: testToken(1), PruneRequest(reason: .unregistered, apnsTimestampMs: nil)) == .notFound)
    }

    @Test(arguments: Backend.allCases) func broadcastChannelsAreKeptPerEnvironmentWithPolicyAndLabel(_ backend: Backend) throws {
        let clock = ManualClock()
        let registry = try backend.open(clock: clock)
        try registry.saveBroadcastChannel(BroadcastChannelRecord(
            app: "a", environment: .development, channelId: "Y2hhbm5lbDE=", storagePolicy: .mostRecent, label: "final"))
        clock.advance(5)
        try registry.saveBroadcastChannel(BroadcastChannelRecord(
            app: "a", environment: .production, channelId: "Y2hhbm5lbDE=", storagePolicy: .noStorage))
        try registry.saveBroadcastChannel(BroadcastChannelRecord(
            app: "b", environment: .development, channelId: "b3RoZXI=", storagePolicy: .noStorage))
        // Saving again keeps the label unless a new one is given.
        try registry.saveBroadcastChannel(BroadcastChannelRecord(
            app: "a", environment: .development, channelId: "Y2hhbm5lbDE=", storagePolicy: .mostRecent))
        let kept = try registry.broadcastChannels(app: "a")
        #expect(kept.map(\.environment) == [.development, .production])
        #expect(kept[0].label == "final" && kept[0].storagePolicy == .mostRecent && kept[0].createdMs == clock.now - 5)
        #expect(kept[1].label == nil && kept[1].storagePolicy == .noStorage)
        #expect(try registry.deleteBroadcastChannel(app: "a", environment: .production, channelId: "Y2hhbm5lbDE="))
        #expect(try !registry.deleteBroadcastChannel(app: "a", environment: .production, channelId: "Y2hhbm5lbDE="))
        #expect(try registry.broadcastChannels(app: "a").map(\.environment) == [.development])
        #expect(try registry.broadcastChannels(app: "b").count == 1)
    }
}
