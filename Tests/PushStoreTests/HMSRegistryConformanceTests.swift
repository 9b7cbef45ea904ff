import Foundation
import PushCore
import Testing

@testable import PushStore
import TestSupport

/// HMS devices in the registry, on both backends: registered, replaced by their previous push token and read under
/// their key (`DeviceKey.hms(token:)`) with the token stored verbatim; their outcomes are logged and announced as
/// hms — rows the service CHECK of schema 15/16 (SQLite) and 12/13 (PostgreSQL) refused before its removal.
@Suite struct HMSRegistryConformanceTests {
    /// A push token in today's look, distinct per `n`.
    static func token(_ n: Int) throws -> HMSPushToken {
        try HMSPushToken(parsing: "IQAAAACy0ht\(n)AACfi7GvwXiTflj6vow-XJ4gsQYPBfqvy8mgYkLHMUwuPyKaeQgfXkIvS22A-mNj-gm1DxQFclXRH7Fvs2Lk1xKk0GBwdPxE7SGhbg")
    }

    @Test func anHMSKeyIsSHA256OfPrefixAndTokenAndApartFromFCMKeys() throws {
        let text = try Self.token(1).value
        let key = DeviceKey.hms(token: text)
        #expect(key.bytes.count == 32)
        #expect(DeviceKey.of(try HMSPushToken(parsing: text)) == key)
        #expect(DeviceKey.fcm(token: text) != key)
    }

    @Test(arguments: Backend.allCases) func anHMSDeviceIsRegisteredReplacedAndReadWithItsToken(_ backend: Backend) throws {
        let registry = try backend.open(clock: ManualClock())
        let first = try Self.token(1), second = try Self.token(2)
        let apns = testToken(1, salt: 41)
        try registry.add(app: "a", token: apns)
        var request = RegistrationRequest(app: "a", hmsToken: first, channels: ["news"])
        request.installation.locale = .set("zh-CN")
        #expect(request.service == .hms)
        #expect(try registry.registerBatch([request]).first?.get() == .created)
        let key = DeviceKey.of(first)
        let device = try #require(try registry.device(app: "a", token: key))
        #expect(device.service == .hms && device.registrationToken == first.value && device.webPush == nil && device.channels == ["news"])
        let targets = try registry.targetPage(app: "a", channel: nil, environment: nil, after: "", through: BroadcastShard.keySpaceEnd, limit: 10)
        #expect(Set(targets.map { "\($0.token.hex) \($0.service)" }) == ["\(apns.hex) apns", "\(key.hex) hms"])
        #expect(targets.first { $0.token == key }?.registrationToken == first.value)
        #expect(try registry.registerBatch([RegistrationRequest(app: "a", hmsToken: second, oldToken: first)]).first?.get() == .replaced(key))
        let replaced = try #require(try registry.device(app: "a", token: DeviceKey.of(second)))
        #expect(replaced.service == .hms && replaced.registrationToken == second.value && replaced.channels == ["news"])
        #expect(try registry.installation(app: "a", token: DeviceKey.of(second))?.locale == "zh-CN")
        // An APNs registration of the HMS device's key is refused: a device never changes service.
        #expect(throws: StoreError.self) { try registry.add(app: "a", token: DeviceKey.of(second)) }
        #expect(try registry.countAudience(app: "a", environment: nil, audience: try Audience.parse(where: ["service = hms"])) == 1)
    }

    @Test(arguments: Backend.allCases) func anHMSOutcomeIsLoggedAndAnnouncedWithItsService(_ backend: Backend) throws {
        let registry = try backend.open(clock: ManualClock())
        let key = DeviceKey.of(try Self.token(7))
        _ = try registry.registerBatch([RegistrationRequest(app: "a", hmsToken: try Self.token(7))]).first?.get()
        let refused = DeliveryOutcome(
            token: key, kind: .rejected, notificationId: "00000000-0000-0000-0000-000000000012", status: 400, reason: "80100003",
            attempts: 1, startedMs: 1, finishedMs: 2, service: .hms)
        var batch = OutcomeBatch(app: "a", job: nil, outcomes: [refused])
        batch.recordEvents = true
        _ = try registry.deliveryStore.commit(batch)
        #expect(try registry.deliveries(DeliveryQuery(app: "a")).records.map(\.service) == [.hms])
        let events = try registry.deliveryStore.claimWebhookEvents(app: "a", limit: 10, leaseMs: 5000)
        #expect(events.map(\.service) == [.hms])
        #expect(events.first?.json["service"]?.stringValue == "hms")
    }

    /// Imports take HMS tokens as bare lines, judged as the API judges them.
    @Test(arguments: Backend.allCases) func bareHMSTokenLinesImportAndABadOneIsNamed(_ backend: Backend) throws {
        let registry = try backend.open()
        let report = try registry.importRegistrationTokens(
            app: "a", service: .hms, lines: [try Self.token(20).value, "not a token", try Self.token(21).value],
            environment: .production, batchSize: 2)
        #expect(report.invalidCount == 1 && report.invalid.first?.line == 2)
        #expect(report.invalid.first?.message.contains("HMS push token") == true)
        #expect(try registry.device(app: "a", token: DeviceKey.of(try Self.token(21)))?.service == .hms)
    }
}
