import PushSimulator
import Foundation
import PushCore
import PushSender
import Synchronization
import Testing

/// The HarmonyOS sender against the real simulator over verified TLS: the scenario-API message Push Kit receives
/// (push-type, category, title), the one self-signed JWT and its re-signing when Huawei refuses it, a background
/// message, what an invalid token does, and a key the simulator does not trust.
@Suite(.timeLimit(.minutes(2)))
struct HarmonyOSSenderTests {
    static let projectId = "101234567890"
    static let settings = HarmonyOSSettings(
        projectId: projectId, serviceAccount: "unused", endpoint: .simulator, category: "SUBSCRIPTION", defaultTitle: "Shop")

    static func keyFile(projectId: String = HarmonyOSSenderTests.projectId) throws -> [UInt8] {
        Array(try SimulatorHarmonyOSAccount.makeDevelopment(projectId: projectId).utf8)
    }

    /// A started simulator trusting one service account, and a HarmonyOS sender signing with `signing` (the trusted
    /// key by default).
    struct Rig {
        let harness: SimulatorHarness
        let sender: HarmonyOSSender

        init(signing: [UInt8]? = nil, configuration: SenderConfiguration? = nil) async throws {
            harness = try await SimulatorHarness(clientAuth: .either)
            let trusted = try HarmonyOSSenderTests.keyFile()
            harness.simulator.trustHarmonyOSAccount(try SimulatorHarmonyOSAccount(keyFileJSON: trusted, source: "trusted"))
            let account = try HarmonyOSServiceAccount(json: signing ?? trusted, source: "key.json")
            sender = try HarmonyOSSender(
                settings: HarmonyOSSenderTests.settings, tokens: AccessTokenCache(harmonyOSAccount: account), owner: account.subAccount,
                target: harness.target(), configuration: configuration ?? SenderConfiguration(maxAttempts: 5, backoffBaseMs: 50))
        }

        func stop() async {
            await sender.shutdown()
            await harness.stop()
        }
    }

    static func item(
        _ token: String, payload: String = #"{"aps":{"alert":"50% off"},"order":"A1"}"#, pushType: PushType = .alert, index: Int = 0
    ) -> SendItem {
        let request = NotificationRequest(
            token: testToken(index), topic: "com.example.app", pushType: pushType, priority: pushType == .alert ? .immediate : .conserve,
            notificationId: NotificationID.random(), payload: Array(payload.utf8))
        var item = SendItem(request, service: .harmonyos)
        item.registrationToken = token
        return item
    }

    @Test func anAcceptedAlertIsPushType0WithTheCategoryAndDefaultTitle() async throws {
        let rig = try await Rig()
        let token = PushSimulator.mintHarmonyOSToken()
        let result = await rig.sender.send(Self.item(token))
        await rig.stop()
        #expect(result.kind == .accepted && result.status == 200 && result.service == .harmonyos, "\(result)")
        let received = try #require(rig.harness.simulator.receivedHarmonyOSMessages.first)
        #expect(received.token == token && received.projectId == Self.projectId && received.pushType == 0)
        let notification = received.message["payload"]?["notification"]
        #expect(notification?["category"]?.stringValue == "SUBSCRIPTION")
        #expect(notification?["title"]?.stringValue == "Shop" && notification?["body"]?.stringValue == "50% off")
        #expect(notification?["clickAction"]?["data"]?["order"]?.stringValue == "A1")
        #expect(rig.sender.tokens.grantsRequested == 1)
    }

    @Test func aSilentPushIsABackgroundMessageOfPushType6() async throws {
        let rig = try await Rig()
        let alert = await rig.sender.send(Self.item(PushSimulator.mintHarmonyOSToken()))
        let result = await rig.sender.send(Self.item(
            PushSimulator.mintHarmonyOSToken(), payload: #"{"aps":{"content-available":1},"sync":true}"#, pushType: .background, index: 1))
        await rig.stop()
        #expect(alert.kind == .accepted && result.kind == .accepted, "\(result)")
        let received = try #require(rig.harness.simulator.receivedHarmonyOSMessages.last)
        #expect(received.pushType == 6 && received.message["payload"]?["extraData"]?.stringValue == #"{"sync":true}"#)
        // Two push-types, one JWT: the header lists differ per push-type, the bearer is shared.
        #expect(rig.sender.tokens.grantsRequested == 1)
    }

    @Test func aJWTHuaweiRefusedIsReSignedOnceAndTheNotificationResent() async throws {
        let rig = try await Rig()
        #expect(await rig.sender.send(Self.item(PushSimulator.mintHarmonyOSToken())).kind == .accepted)
        rig.harness.simulator.expireHarmonyOSTokens()
        let token = PushSimulator.mintHarmonyOSToken()
        let result = await rig.sender.send(Self.item(token, index: 1))
        await rig.stop()
        #expect(result.kind == .accepted && result.attempts == 2, "\(result)")
        #expect(rig.sender.tokens.grantsRequested == 2)
        #expect(rig.harness.simulator.receivedHarmonyOSMessages.map(\.token).last == token)
    }

    @Test func aKeyTheSimulatorDoesNotTrustStopsHarmonyOSAfterOneReSigning() async throws {
        let rig = try await Rig(signing: try Self.keyFile())
        let result = await rig.sender.send(Self.item(PushSimulator.mintHarmonyOSToken()))
        await rig.stop()
        #expect(result.kind == .unsent && result.stop?.kind == .credentials && result.attempts == 2, "\(result)")
        #expect(result.stop?.message.contains("80200001") == true, "\(result.stop?.message ?? "")")
        #expect(rig.sender.tokens.grantsRequested == 2)
        #expect(rig.harness.simulator.receivedHarmonyOSMessages.isEmpty)
    }

    @Test func anInvalidTokenIsTokenDeadThroughTheBreaker() async throws {
        let configuration = SenderConfiguration(
            maxAttempts: 2, backoffBaseMs: 50, breakerConsecutive: 5, breakerRatio: 0.2, breakerMinimumAnswers: 20)
        let rig = try await Rig(configuration: configuration)
        let tokens = (0..<12).map { _ in PushSimulator.mintHarmonyOSToken() }
        for token in tokens { rig.harness.simulator.invalidateHarmonyOSToken(token) }
        var results: [DeliveryResult] = []
        for (index, token) in tokens.enumerated() { results.append(await rig.sender.send(Self.item(token, index: index))) }
        #expect(results.allSatisfy { $0.kind == .tokenDead && $0.status == 400 && $0.reason?.rawValue == "80300007" }, "\(results)")
        #expect(results.map(\.prune) == Array(repeating: .held, count: 4) + Array(repeating: .keptByBreaker, count: 8))
        #expect(rig.sender.trippedEndpoints == [rig.sender.breakerKey])
        await rig.stop()
    }
}
