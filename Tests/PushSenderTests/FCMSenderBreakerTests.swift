import PushSimulator
import Foundation
import PushCore
import PushSender
import Synchronization
import Testing

/// The FCM sender's pruning breaker against the real simulator: a service account of the wrong Firebase project gets
/// SENDER_ID_MISMATCH for every token and must prune none of them, while a few foreign tokens among healthy answers
/// are pruned once FCM has proven healthy.
@Suite(.timeLimit(.minutes(1)))
struct FCMSenderBreakerTests {
    /// Small thresholds so a run of tens of sends crosses them: 5 suspect answers in a row trip it, and the ratio
    /// (20 %) and health apply from 20 answers on.
    static let configuration = SenderConfiguration(
        maxAttempts: 2, backoffBaseMs: 50, breakerConsecutive: 5, breakerRatio: 0.2, breakerMinimumAnswers: 20)

    /// Sends `tokens` one after another (so the breaker sees them in this order), recording the tokens whose held
    /// prune the breaker released.
    static func sendInOrder(_ sender: FCMSender, _ tokens: [String]) async -> (results: [DeliveryResult], released: [DeviceToken]) {
        let released = Mutex<[DeviceToken]>([])
        var results: [DeliveryResult] = []
        for (index, token) in tokens.enumerated() {
            let result = await withCheckedContinuation { (c: CheckedContinuation<DeliveryResult, Never>) in
                sender.submit(
                    FCMSenderTests.item(token, index: index), onResult: { c.resume(returning: $0) },
                    onPruneReleased: { token in released.withLock { $0.append(token) } })
            }
            results.append(result)
        }
        return (results, released.withLock { $0 })
    }

    @Test func everyTokenAnsweringSenderIdMismatchPrunesNoneAndTripsTheBreaker() async throws {
        let tokens = (0..<12).map { _ in PushSimulator.mintFCMToken() }
        let rig = try await FCMSenderTests.Rig(configuration: Self.configuration, fcmForeignTokens: Set(tokens))
        let (results, released) = await Self.sendInOrder(rig.sender, tokens)
        let key = rig.sender.breakerKey
        #expect(results.allSatisfy { $0.kind == .tokenDead && $0.status == 403 && $0.reason?.rawValue == "SENDER_ID_MISMATCH" })
        // Before the fifth answer in a row: held; the fifth trips it (the four held prunes are discarded), the rest are
        // kept. Nothing is released, nothing is left held for the end of the run.
        #expect(results.map(\.prune) == Array(repeating: .held, count: 4) + Array(repeating: .keptByBreaker, count: 8))
        #expect(released.isEmpty)
        #expect(rig.sender.endRun() == 0)
        #expect(rig.sender.summary.breakerTripped == [key])
        #expect(rig.sender.trippedEndpoints == [key])
        #expect(rig.sender.endpointConditions.map(\.breakerTripped) == [true])
        let state = try #require(rig.sender.breakerStates[key])
        #expect(state.tripped)
        // The key names the project's send URL: never an APNs endpoint's https://host:port.
        #expect(key == rig.sender.sendURL && key != rig.harness.target().description)

        // The app's router persists what the run ends with: its APNs sender was handed every stored state (FCM's
        // untripped one among them, as a run loads them) and passes them on, and the FCM sender's current, tripped
        // state must win over that stale copy.
        let apns = try APNsSender(
            target: rig.harness.target(), credentials: FixedCertificate(tlsIdentity: nil),
            breakerStates: [key: PruningBreaker.State()])
        #expect(apns.breakerStates[key]?.tripped == false)
        let router = ServiceRouter(apns: apns, webPush: nil, fcm: rig.sender)
        #expect(router.breakerStates[key]?.tripped == true)
        await apns.shutdown()
        await rig.stop()

        // The next run continues the persisted state: still tripped, the first foreign token is kept at once.
        let next = try FCMSender(
            account: rig.account, tokens: AccessTokenCache(serviceAccount: rig.account, caFile: rig.harness.caFile),
            target: rig.sender.target, configuration: Self.configuration, breakerStates: rig.sender.breakerStates)
        #expect(next.trippedEndpoints == [key])
        await next.shutdown()
    }

    @Test func aFewSenderIdMismatchTokensAmongAcceptedOnesArePrunedOnceFCMProvesHealthy() async throws {
        let tokens = (0..<30).map { _ in PushSimulator.mintFCMToken() }
        let foreign: Set<String> = [tokens[2], tokens[5]]
        let rig = try await FCMSenderTests.Rig(configuration: Self.configuration, fcmForeignTokens: foreign)
        // An uninstalled app among them: per-device evidence, pruned at once whatever the breaker knows.
        rig.harness.simulator.unregisterFCMToken(tokens[1])
        let (results, released) = await Self.sendInOrder(rig.sender, tokens)
        let endRun = rig.sender.endRun()
        let summary = rig.sender.summary
        let tripped = rig.sender.trippedEndpoints
        await rig.stop()
        guard case .delete(let unregistered) = results[1].prune else { Issue.record("not pruned: \(results[1].prune)"); return }
        #expect(unregistered.reason == "UNREGISTERED" && results[1].status == 404)
        // Both foreign tokens come before FCM has 20 answers: held, then released once 2 suspects are under 10 % of
        // the answers (half the ratio: at the 21st).
        #expect(results[2].prune == .held && results[5].prune == .held)
        #expect(results[2].status == 403 && results[5].status == 403)
        #expect(Set(released) == [results[2].token, results[5].token] && released.count == 2)
        #expect(results.enumerated().filter { ![1, 2, 5].contains($0.offset) }.allSatisfy { $0.element.kind == .accepted })
        #expect(endRun == 0)
        #expect(summary.breakerTripped.isEmpty && tripped.isEmpty)
    }
}
