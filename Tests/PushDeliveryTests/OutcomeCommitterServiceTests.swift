import PushCore
import Testing

@testable import PushDelivery

/// The committer's conversion keeps the device's push service, so the delivery log and the webhook say which
/// service answered.
@Suite struct OutcomeCommitterServiceTests {
    @Test(arguments: [PushService.apns, .webpush, .fcm]) func aResultsServiceBecomesItsOutcomesService(_ service: PushService) {
        let result = DeliveryResult(
            token: DeviceToken(trustedCanonicalHex: String(repeating: "07", count: 32)), notificationId: "00000000-0000-0000-0000-000000000001",
            status: 410, kind: .tokenDead, attempts: 1, startedAtMs: 1, finishedAtMs: 2, service: service)
        let outcome = OutcomeCommitter.outcome(result)
        #expect(outcome.service == service && outcome.kind == .tokenDead && outcome.status == 410)
    }
}
