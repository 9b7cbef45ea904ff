import PushSimulator
import Foundation
import PushCore
import PushSender
import Synchronization
import Testing

/// FCM under faults and over (virtual) time: 429/503 answers are retried to acceptance; the number of token grants
/// stays at one per renewal period whatever the number of connections (issue #40's acceptance).
@Suite(.timeLimit(.minutes(5)))
struct FCMSenderFaultTests {
    @Test func quotaAndUnavailableAnswersAreRetriedThenAccepted() async throws {
        let rig = try await FCMSenderTests.Rig(
            faults: SimulatorFaults(tooManyRequestsFraction: 0.2, serviceUnavailableFraction: 0.2), connections: 2, maxAttempts: 20)
        let results = await withTaskGroup(of: DeliveryResult.self) { group in
            for i in 0..<40 { group.addTask { await rig.sender.send(FCMSenderTests.item(PushSimulator.mintFCMToken(), index: i)) } }
            return await group.reduce(into: [DeliveryResult]()) { $0.append($1) }
        }
        await rig.stop()
        let failed = results.filter { !$0.isAccepted }.map { "\($0.kind) \($0.status)" }
        #expect(failed.isEmpty, "\(failed)")
        #expect(rig.sender.summary.retried > 0, "the faults were met and retried")
        #expect(rig.harness.simulator.fcmMessagesAccepted == 40)
    }

    /// Ten virtual minutes with 60 s tokens on 8 connections: the cache and the simulator's token endpoint share one
    /// clock, stepped 5 s between rounds of sends. Grants ≤ 11 (one at the start, one per 55 s renewal period), counted
    /// by the cache and by the simulator, and every send accepted (none met an expired token).
    @Test func grantsInTenMinutesWithSixtySecondTokensStayAtOnePerRenewalPeriodOnEightConnections() async throws {
        let virtualMs = Atomic<Int64>(Int64(Date().timeIntervalSince1970 * 1000))
        let rig = try await FCMSenderTests.Rig(
            lifetime: 60, connections: 8, simulatorClock: { virtualMs.load(ordering: .relaxed) },
            now: { Date(timeIntervalSince1970: Double(virtualMs.load(ordering: .relaxed)) / 1000) })
        var sent = 0
        var accepted = 0
        for _ in 0..<120 {
            let results = await withTaskGroup(of: DeliveryResult.self) { group in
                for i in 0..<16 { group.addTask { await rig.sender.send(FCMSenderTests.item(PushSimulator.mintFCMToken(), index: i)) } }
                return await group.reduce(into: [DeliveryResult]()) { $0.append($1) }
            }
            sent += results.count
            accepted += results.filter(\.isAccepted).count
            virtualMs.add(5000, ordering: .relaxed)
        }
        await rig.stop()
        #expect(sent == 1920 && accepted == sent)
        let grants = rig.sender.tokens.grantsRequested
        #expect(grants <= 11, "\(grants) grants in 10 minutes")
        #expect(grants >= 10, "the token was renewed as it aged (\(grants) grants)")
        // A renewal started in the last round (sends went on with the still-valid token) may not have reached the
        // simulator before it stopped.
        #expect((grants - 1...grants).contains(rig.harness.simulator.accessTokensGranted), "the simulator's own count")
    }
}
