import Foundation
import PushCore
import Testing

@testable import PushStore
import TestSupport

/// FCM devices in the registry, on both backends: registered, refreshed, replaced by their previous registration
/// token and read under their key (`DeviceKey.fcm(token:)`) with the token stored verbatim; a device never changes
/// service; their outcomes are logged and announced as fcm.
@Suite struct FCMRegistryConformanceTests {
    /// A registration token in today's form, distinct per `n`.
    static func token(_ n: Int) throws -> FCMRegistrationToken {
        try FCMRegistrationToken(parsing: "cAbC\(n)dEfGhIjKlMnOpQrStUv:APA91b" + String(repeating: "x9_-Yz", count: 22) + "\(n)")
    }

    @Test func anFCMKeyIsSHA256OfPrefixAndTokenAndApartFromWebPushKeys() throws {
        let text = "dQw4w9WgXcQ-ABCDEFGHIJ:APA91bExampleExampleExampleExample"
        let key = DeviceKey.fcm(token: text)
        // SHA-256("fcm:" + text), computed independently with sha256sum.
        #expect(key.hex == "f9e9863c71390fdf6a9d1f22d35f45b6b689ca2622228115cf10e93df7ecc15b")
        #expect(key.bytes.count == 32)
        #expect(DeviceKey.of(try FCMRegistrationToken(parsing: text)) == key)
        #expect(DeviceKey.webPush(endpointURL: text) != key)
    }

    @Test(arguments: Backend.allCases) func anFCMDeviceIsRegisteredRefreshedReplacedAndReadWithItsToken(_ backend: Backend) throws {
        let clock = ManualClock()
        let registry = try backend.open(clock: clock)
        let first = try Self.token(1), second = try Self.token(2)
        let apns = testToken(1, salt: 40)
        try registry.add(app: "a", token: apns)
        var request = RegistrationRequest(app: "a", fcmToken: first, channels: ["news"])
        request.installation.locale = .set("de-DE")
        #expect(request.service == .fcm)
        #expect(try registry.registerBatch([request]).first?.get() == .created)
        let key = DeviceKey.of(first)
        let device = try #require(try registry.device(app: "a", token: key))
        #expect(device.service == .fcm && device.registrationToken == first.value && device.webPush == nil && device.channels == ["news"])
        // The environment follows web devices': the request's, else production (FCM has none of its own).
        #expect(device.environment == .production)
        #expect(try registry.device(app: "a", token: apns)?.registrationToken == nil)
        clock.advance(10)
        // Registering the same token again (as the app does at every launch, without channels) refreshes it.
        #expect(try registry.registerBatch([RegistrationRequest(app: "a", fcmToken: first)]).first?.get() == .updated)
        let refreshed = try #require(try registry.device(app: "a", token: key))
        #expect(refreshed.lastRegisteredMs == clock.now && refreshed.channels == ["news"] && refreshed.registrationToken == first.value)

        // Every read the engine sends from carries the service and the token.
        let targets = try registry.targetPage(app: "a", channel: nil, environment: nil, after: "", through: BroadcastShard.keySpaceEnd, limit: 10)
        #expect(Set(targets.map { "\($0.token.hex) \($0.service)" }) == ["\(apns.hex) apns", "\(key.hex) fcm"])
        #expect(targets.first { $0.token == key }?.registrationToken == first.value)
        #expect(try registry.targetPage(app: "a", channel: "news", environment: nil, after: "", through: BroadcastShard.keySpaceEnd, limit: 10)
            .map(\.registrationToken) == [first.value])
        try registry.createBroadcast(
            BroadcastRecord(id: "x", app: "a", payload: Array("{}".utf8), pushType: .alert, priority: .immediate), tokens: [key, apns])
        let explicit = try registry.explicitTargets(id: "x", after: "", through: BroadcastShard.keySpaceEnd, limit: 10)
        #expect(explicit.first { $0.token == key }.map { ($0.service, $0.registrationToken, $0.locale) } ?? (.apns, nil, nil) == (.fcm, first.value, "de-DE"))

        // Replacement names the previous registration token: channels and installation fields carry over.
        #expect(try registry.registerBatch([RegistrationRequest(app: "a", fcmToken: second, oldToken: first)]).first?.get() == .replaced(key))
        #expect(try registry.device(app: "a", token: key) == nil)
        let replaced = try #require(try registry.device(app: "a", token: DeviceKey.of(second)))
        #expect(replaced.service == .fcm && replaced.registrationToken == second.value && replaced.channels == ["news"])
        #expect(try registry.installation(app: "a", token: DeviceKey.of(second))?.locale == "de-DE")
        #expect(try registry.count(app: "a", channel: nil, environment: nil) == 2)
        // A replacement whose old token is unknown just registers the new one.
        #expect(try registry.registerBatch([RegistrationRequest(app: "a", fcmToken: try Self.token(3), oldToken: first)]).first?.get() == .created)
    }

    @Test(arguments: Backend.allCases) func anFCMDeviceNeverChangesService(_ backend: Backend) throws {
        let registry = try backend.open()
        let token = try Self.token(5)
        let key = DeviceKey.of(token)
        let apns = testToken(2, salt: 40)
        try registry.add(app: "a", token: apns)
        #expect(try registry.registerBatch([RegistrationRequest(app: "a", fcmToken: token)]).first?.get() == .created)
        // An APNs registration of the FCM device's key, one by one and in a group commit's plain upsert: refused.
        #expect(throws: StoreError.self) { try registry.add(app: "a", token: key) }
        let batch = registry.registerBatch([RegistrationRequest(app: "a", token: key), RegistrationRequest(app: "a", token: testToken(3, salt: 40))])
        guard case .failure(let error) = batch[0] else { Issue.record("an APNs registration over an fcm device was accepted"); return }
        #expect(error.code == .constraint && error.message.contains("fcm"))
        #expect(try batch[1].get() == .created)
        // Nor does an FCM registration replace an APNs device, or an APNs one an FCM device.
        var sneaky = RegistrationRequest(app: "a", fcmToken: try Self.token(6))
        sneaky.oldToken = apns
        #expect(throws: StoreError.self) { try registry.registerBatch([sneaky]).first?.get() }
        #expect(throws: StoreError.self) { try registry.add(app: "a", token: testToken(4, salt: 40), oldToken: key) }
        // The import's upsert leaves it alone too.
        try registry.writeImportBatch(app: "a", tokens: [key], environment: .development, channels: nil)
        let device = try #require(try registry.device(app: "a", token: key))
        #expect(device.service == .fcm && device.registrationToken == token.value && device.environment == .production)
        #expect(try registry.device(app: "a", token: apns)?.service == .apns)
        #expect(try registry.device(app: "a", token: DeviceKey.of(try Self.token(6))) == nil)
        #expect(try registry.count(app: "a", channel: nil, environment: nil) == 3)
    }

    /// An FCM device's outcomes carry `fcm` into the delivery log and the webhook outbox.
    @Test(arguments: Backend.allCases) func anFCMOutcomeIsLoggedAndAnnouncedWithItsService(_ backend: Backend) throws {
        let registry = try backend.open(clock: ManualClock())
        let key = DeviceKey.of(try Self.token(7))
        _ = try registry.registerBatch([RegistrationRequest(app: "a", fcmToken: try Self.token(7))]).first?.get()
        // A permanent refusal (how the sender asks for a prune is the sending side's; the service is what is tested).
        let refused = DeliveryOutcome(
            token: key, kind: .rejected, notificationId: "00000000-0000-0000-0000-000000000011", status: 400, reason: "INVALID_ARGUMENT",
            attempts: 1, startedMs: 1, finishedMs: 2, service: .fcm)
        var batch = OutcomeBatch(app: "a", job: nil, outcomes: [refused])
        batch.recordEvents = true
        _ = try registry.deliveryStore.commit(batch)
        #expect(try registry.deliveries(DeliveryQuery(app: "a")).records.map(\.service) == [.fcm])
        #expect(try registry.recentDeliveries(app: "a", limit: 10).map(\.service) == [.fcm])
        let events = try registry.deliveryStore.claimWebhookEvents(app: "a", limit: 10, leaseMs: 5000)
        #expect(events.map(\.kind) == [.deliveryFailed] && events.map(\.service) == [.fcm])
        #expect(events.first?.json["service"]?.stringValue == "fcm")
    }

    /// Audiences select FCM devices by service, as the store counts them.
    @Test(arguments: Backend.allCases) func serviceClausesSelectFCMDevices(_ backend: Backend) throws {
        let registry = try backend.open()
        try registry.add(app: "a", token: testToken(8, salt: 40))
        for n in 10..<13 { _ = try registry.registerBatch([RegistrationRequest(app: "a", fcmToken: try Self.token(n))]).first?.get() }
        func count(_ text: String) throws -> Int {
            try registry.countAudience(app: "a", environment: nil, audience: try Audience.parse(where: [text]))
        }
        #expect(try count("service = fcm") == 3)
        #expect(try count("service in apns,fcm") == 4)
        #expect(try count("service in webpush,fcm") == 3)
        #expect(try count("service = apns") == 1)
    }
}
