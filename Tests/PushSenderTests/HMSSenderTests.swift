import PushSimulator
import Foundation
import PushCore
import PushSender
import Synchronization
import Testing

/// The HMS sender against the real simulator over verified TLS: the message Push Kit receives, the one shared access
/// token and its renewal when Huawei expires it early, what an invalid token does, and the pruning breaker when every
/// token looks invalid (another app's credentials).
@Suite(.timeLimit(.minutes(2)))
struct HMSSenderTests {
    static let clientId = "104000001"
    static let settings = HMSSettings(clientId: clientId, clientSecretFile: "unused", endpoint: .simulator, defaultTitle: "Shop")

    /// A started simulator trusting one Huawei app, and an HMS sender for it.
    struct Rig {
        let harness: SimulatorHarness
        let sender: HMSSender

        init(faults: SimulatorFaults = .init(), secret: String = "right-secret", configuration: SenderConfiguration? = nil) async throws {
            harness = try await SimulatorHarness(faults: faults, clientAuth: .either)
            harness.simulator.trustHMSApp(clientId: HMSSenderTests.clientId, secret: "right-secret")
            let credentials = HMSClientCredentials(clientId: HMSSenderTests.clientId, secret: secret, tokenURL: harness.simulator.hmsTokenURL)
            sender = try HMSSender(
                credentials: credentials, tokens: AccessTokenCache(clientCredentials: credentials, caFile: harness.caFile),
                settings: HMSSenderTests.settings, target: harness.target(),
                configuration: configuration ?? SenderConfiguration(maxAttempts: 5, backoffBaseMs: 50))
        }

        func stop() async {
            await sender.shutdown()
            await harness.stop()
        }
    }

    static func item(_ token: String, payload: String = #"{"aps":{"alert":"50% off"}}"#, index: Int = 0) -> SendItem {
        let request = NotificationRequest(
            token: testToken(index), topic: "com.example.app", pushType: .alert, priority: .immediate, notificationId: NotificationID.random(),
            payload: Array(payload.utf8))
        var item = SendItem(request, service: .hms)
        item.registrationToken = token
        return item
    }

    @Test func anAcceptedMessageCarriesTheDefaultTitleAndIsRecordedForItsToken() async throws {
        let rig = try await Rig()
        let token = PushSimulator.mintHMSToken()
        let result = await rig.sender.send(Self.item(token))
        await rig.stop()
        #expect(result.kind == .accepted && result.status == 200 && result.service == .hms, "\(result)")
        let received = try #require(rig.harness.simulator.receivedHMSMessages.first)
        #expect(received.token == token && received.clientId == Self.clientId)
        #expect(received.message["android"]?["notification"]?["title"]?.stringValue == "Shop")
        #expect(received.message["android"]?["notification"]?["body"]?.stringValue == "50% off")
        #expect(rig.sender.tokens.grantsRequested == 1)
    }

    @Test func anAccessTokenHuaweiExpiredEarlyIsRenewedOnceAndTheNotificationResent() async throws {
        let rig = try await Rig()
        #expect(await rig.sender.send(Self.item(PushSimulator.mintHMSToken())).kind == .accepted)
        rig.harness.simulator.expireHMSAccessTokens()
        let token = PushSimulator.mintHMSToken()
        let result = await rig.sender.send(Self.item(token, index: 1))
        await rig.stop()
        #expect(result.kind == .accepted && result.attempts == 2, "\(result)")
        #expect(rig.sender.tokens.grantsRequested == 2)
        #expect(rig.harness.simulator.receivedHMSMessages.map(\.token).last == token)
    }

    @Test func aWrongSecretStopsHMSNamingHuaweisAnswer() async throws {
        let rig = try await Rig(secret: "wrong-secret")
        let result = await rig.sender.send(Self.item(PushSimulator.mintHMSToken()))
        await rig.stop()
        #expect(result.kind == .unsent && result.stop?.kind == .credentials, "\(result)")
        #expect(result.stop?.message.contains("refused the grant (HTTP 400)") == true, "\(result.stop?.message ?? "")")
        #expect(rig.harness.simulator.receivedHMSMessages.isEmpty)
    }

    @Test func flowControlIsRetriedUntilAccepted() async throws {
        var faults = SimulatorFaults()
        faults.hmsFlowControlFraction = 0.5
        let rig = try await Rig(faults: faults, configuration: SenderConfiguration(maxAttempts: 20, backoffBaseMs: 10))
        var results: [DeliveryResult] = []
        for index in 0..<10 { results.append(await rig.sender.send(Self.item(PushSimulator.mintHMSToken(), index: index))) }
        await rig.stop()
        #expect(results.allSatisfy { $0.kind == .accepted }, "\(results.map(\.kind))")
        // Half the sends meet flow control: over ten, at least one retry happened (each attempt is 1 in 2).
        #expect(results.contains { $0.attempts > 1 })
    }

    @Test func everyTokenInvalidPrunesNoneAndTripsTheBreaker() async throws {
        let configuration = SenderConfiguration(
            maxAttempts: 2, backoffBaseMs: 50, breakerConsecutive: 5, breakerRatio: 0.2, breakerMinimumAnswers: 20)
        let rig = try await Rig(configuration: configuration)
        let tokens = (0..<12).map { _ in PushSimulator.mintHMSToken() }
        for token in tokens { rig.harness.simulator.invalidateHMSToken(token) }
        var results: [DeliveryResult] = []
        for (index, token) in tokens.enumerated() { results.append(await rig.sender.send(Self.item(token, index: index))) }
        #expect(results.allSatisfy { $0.kind == .tokenDead && $0.status == 400 && $0.reason?.rawValue == "80300007" })
        #expect(results.map(\.prune) == Array(repeating: .held, count: 4) + Array(repeating: .keptByBreaker, count: 8))
        #expect(rig.sender.endRun() == 0)
        #expect(rig.sender.trippedEndpoints == [rig.sender.breakerKey])
        await rig.stop()
    }

    @Test func aFewInvalidTokensAmongAcceptedOnesArePrunedOncePushKitProvesHealthy() async throws {
        let configuration = SenderConfiguration(
            maxAttempts: 2, backoffBaseMs: 50, breakerConsecutive: 5, breakerRatio: 0.2, breakerMinimumAnswers: 20)
        let rig = try await Rig(configuration: configuration)
        let tokens = (0..<30).map { _ in PushSimulator.mintHMSToken() }
        rig.harness.simulator.invalidateHMSToken(tokens[3])
        let released = Mutex<[DeviceToken]>([])
        var results: [DeliveryResult] = []
        for (index, token) in tokens.enumerated() {
            results.append(await withCheckedContinuation { (c: CheckedContinuation<DeliveryResult, Never>) in
                rig.sender.submit(Self.item(token, index: index), onResult: { c.resume(returning: $0) }, onPruneReleased: { t in
                    released.withLock { $0.append(t) }
                })
            })
        }
        await rig.stop()
        #expect(results[3].kind == .tokenDead && results[3].prune == .held)
        // Once 20 answers show Push Kit healthy, the held prune is released for deletion.
        #expect(released.withLock { $0 } == [testToken(3)])
        #expect(rig.sender.trippedEndpoints.isEmpty)
    }
}
