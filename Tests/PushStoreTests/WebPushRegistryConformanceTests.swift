import Foundation
import PushCore
import Testing

@testable import PushStore
import TestSupport

/// Push services in the registry, on both backends: a Web Push device is registered, refreshed, replaced and
/// pruned under its key (``DeviceKey``), a device never changes service, every read the engine uses carries the
/// service and subscription, and the upgrade that adds them leaves every existing device an unchanged APNs one.
@Suite struct WebPushRegistryConformanceTests {
    /// A subscription to `path` on Apple's Web Push service, with keys of the right form.
    static func subscription(_ path: String, seed: UInt8 = 1) throws -> WebPushSubscription {
        try WebPushSubscription(
            endpoint: WebPushEndpoint(parsing: "https://web.push.apple.com/\(path)"),
            p256dh: [0x04] + [UInt8](repeating: seed, count: 64), auth: [UInt8](repeating: seed &+ 1, count: 16),
            expirationTime: seed == 1 ? nil : 1_900_000_000_000)
    }

    @Test func aWebPushKeyIsSHA256OfTheEndpointAndUniformLikeAnAPNsToken() throws {
        let key = DeviceKey.webPush(endpointURL: "https://web.push.apple.com/abc")
        // SHA-256("webpush:https://web.push.apple.com/abc"), computed independently with sha256sum.
        #expect(key.hex == "1c3ecbc475cd017ee1caff72776f0f354bcfa6a246cf6c66444fbce57748b227")
        #expect(key.bytes.count == 32)
        #expect(DeviceKey.webPush(endpointURL: "https://web.push.apple.com/abd") != key)
        #expect(DeviceKey.of(try Self.subscription("abc")) == key)
    }

    @Test(arguments: Backend.allCases) func aWebPushDeviceIsRegisteredRefreshedReplacedAndReadWithItsSubscription(_ backend: Backend) throws {
        let clock = ManualClock()
        let registry = try backend.open(clock: clock)
        let first = try Self.subscription("first"), second = try Self.subscription("second", seed: 7)
        let apns = testToken(1)
        try registry.add(app: "a", token: apns)
        var request = RegistrationRequest(app: "a", subscription: first, channels: ["news"])
        request.installation.locale = .set("fr-FR")
        #expect(try registry.registerBatch([request]).first?.get() == .created)
        let key = DeviceKey.of(first)
        let device = try #require(try registry.device(app: "a", token: key))
        #expect(device.service == .webpush && device.webPush == first && device.channels == ["news"])
        #expect(try registry.device(app: "a", token: apns)?.service == .apns)
        #expect(try registry.device(app: "a", token: apns)?.webPush == nil)
        clock.advance(10)
        #expect(try registry.registerBatch([RegistrationRequest(app: "a", subscription: first)]).first?.get() == .updated)
        #expect(try registry.device(app: "a", token: key)?.lastRegisteredMs == clock.now)

        // Every read the engine sends from carries the service and the subscription.
        let targets = try registry.targetPage(app: "a", channel: nil, environment: nil, after: "", through: BroadcastShard.keySpaceEnd, limit: 10)
        #expect(Set(targets.map { "\($0.token.hex) \($0.service)" }) == ["\(apns.hex) apns", "\(key.hex) webpush"])
        #expect(targets.first { $0.token == key }?.webPush == first)
        #expect(try registry.targetPage(app: "a", channel: "news", environment: nil, after: "", through: BroadcastShard.keySpaceEnd, limit: 10)
            .map(\.webPush) == [first])
        try registry.createBroadcast(
            BroadcastRecord(id: "x", app: "a", payload: Array("{}".utf8), pushType: .alert, priority: .immediate), tokens: [key, apns])
        let explicit = try registry.explicitTargets(id: "x", after: "", through: BroadcastShard.keySpaceEnd, limit: 10)
        #expect(explicit.first { $0.token == key }.map { ($0.service, $0.webPush, $0.locale) } ?? (.apns, nil, nil) == (.webpush, first, "fr-FR"))
        #expect(explicit.first { $0.token == apns }?.service == .apns)
        #expect(try registry.userDevices(app: "a", user: "nobody", after: "", limit: 10).isEmpty)

        // Replacement names the old subscription's endpoint: channels and installation fields carry over.
        #expect(try registry.registerBatch([RegistrationRequest(app: "a", subscription: second, oldEndpoint: first.endpoint.url)])
            .first?.get() == .replaced(key))
        #expect(try registry.device(app: "a", token: key) == nil)
        let replaced = try #require(try registry.device(app: "a", token: DeviceKey.of(second)))
        #expect(replaced.webPush == second && replaced.webPush?.expirationTime == 1_900_000_000_000 && replaced.channels == ["news"])
        #expect(try registry.installation(app: "a", token: DeviceKey.of(second))?.locale == "fr-FR")
        #expect(try registry.count(app: "a", channel: nil, environment: nil) == 2)
    }

    @Test(arguments: Backend.allCases) func aDeviceNeverChangesService(_ backend: Backend) throws {
        let registry = try backend.open()
        let sub = try Self.subscription("s")
        let key = DeviceKey.of(sub)
        let apns = testToken(2)
        try registry.add(app: "a", token: apns)
        #expect(try registry.registerBatch([RegistrationRequest(app: "a", subscription: sub)]).first?.get() == .created)
        // An APNs registration of the Web Push device's key, one by one and in a group commit's plain upsert: refused.
        #expect(throws: StoreError.self) { try registry.add(app: "a", token: key) }
        let batch = registry.registerBatch([RegistrationRequest(app: "a", token: key), RegistrationRequest(app: "a", token: testToken(3))])
        guard case .failure(let error) = batch[0] else { Issue.record("an APNs registration over a webpush device was accepted"); return }
        #expect(error.code == .constraint && error.message.contains("webpush"))
        #expect(try batch[1].get() == .created)
        // Nor does an APNs registration replace a Web Push device, or a Web Push one an APNs device.
        #expect(throws: StoreError.self) { try registry.add(app: "a", token: testToken(4), oldToken: key) }
        var sneaky = RegistrationRequest(app: "a", subscription: try Self.subscription("t"))
        sneaky.oldToken = apns
        #expect(throws: StoreError.self) { try registry.registerBatch([sneaky]).first?.get() }
        // The import's upsert leaves it alone too.
        try registry.writeImportBatch(app: "a", tokens: [key], environment: .development, channels: nil)
        let device = try #require(try registry.device(app: "a", token: key))
        #expect(device.service == .webpush && device.webPush == sub && device.environment == .production)
        #expect(try registry.device(app: "a", token: apns)?.service == .apns)
        #expect(try registry.device(app: "a", token: testToken(4)) == nil)
        #expect(try registry.count(app: "a", channel: nil, environment: nil) == 3)
    }

    /// What the Web Push sender sends for a 404 or 410: the push service's status as its reason, no timestamp. It
    /// removes the device whatever its last registration (no timestamp to gate on), and the prune log and counters
    /// say what the push service said, never an APNs reason.
    @Test(arguments: Backend.allCases) func aWebPushGoneAnswerRemovesTheDeviceUnconditionallyUnderThePushServicesStatus(_ backend: Backend) throws {
        let clock = ManualClock()
        let registry = try backend.open(clock: clock)
        let (gone, expired) = (try Self.subscription("gone"), try Self.subscription("expired", seed: 2))
        let (key, expiredKey) = (DeviceKey.of(gone), DeviceKey.of(expired))
        _ = try registry.registerBatch([RegistrationRequest(app: "a", subscription: gone), RegistrationRequest(app: "a", subscription: expired)])
        clock.advance(1000)
        _ = try registry.registerBatch([RegistrationRequest(app: "a", subscription: gone)]).first?.get()  // registered again, later
        #expect(try registry.prune(app: "a", token: key, PruneRequest(service: "410", status: 410)) == .deleted)
        #expect(try registry.prune(app: "a", token: expiredKey, PruneRequest(service: "404", status: 404)) == .deleted)
        #expect(try registry.device(app: "a", token: key) == nil)
        let log = try registry.pruneLog(app: "a", limit: 10)
        #expect(log.map(\.token) == [expiredKey, key])
        #expect(log.map(\.reason) == ["404", "410"])
        #expect(log.allSatisfy { $0.apnsTimestampMs == nil && $0.outcome == .deleted })
        #expect(Set(try registry.pruneCounts().map(\.reason)) == ["404", "410"])
        #expect(try registry.pruneCounts().allSatisfy { $0.service == .webpush })
    }

    /// What the FCM sender sends for a dead token: FCM's own error code. The prune log, its counters and the delivery
    /// history carry it (UNREGISTERED, SENDER_ID_MISMATCH), never an APNs reason.
    @Test(arguments: Backend.allCases) func anFCMPruneAndItsHistoryRowCarryFCMsOwnErrorCode(_ backend: Backend) throws {
        let registry = try backend.open(clock: ManualClock())
        let tokens = try ["a", "b"].map { try FCMRegistrationToken(parsing: String(repeating: $0, count: 22) + ":APA91b" + String(repeating: "c", count: 134)) }
        let keys = tokens.map { DeviceKey.fcm(token: $0.value) }
        _ = registry.registerBatch(tokens.map { RegistrationRequest(app: "a", fcmToken: $0) })
        let outcomes = zip(keys, [("UNREGISTERED", 404), ("SENDER_ID_MISMATCH", 403)]).enumerated().map { i, pair in
            DeliveryOutcome(
                token: pair.0, kind: .tokenDead, notificationId: "00000000-0000-0000-0000-00000000000\(i)", status: pair.1.1,
                reason: pair.1.0, attempts: 1, prune: PruneRequest(service: pair.1.0, status: pair.1.1), startedMs: 1,
                finishedMs: 2, service: .fcm)
        }
        var batch = OutcomeBatch(app: "a", job: nil, outcomes: outcomes)
        batch.deliveryLog = .all
        #expect(Set(try registry.deliveryStore.commit(batch).pruned) == Set(keys))
        #expect(Set(try registry.pruneLog(app: "a", limit: 10).map(\.reason)) == ["UNREGISTERED", "SENDER_ID_MISMATCH"])
        #expect(Set(try registry.pruneCounts().map(\.reason)) == ["UNREGISTERED", "SENDER_ID_MISMATCH"])
        let history = try registry.deliveries(DeliveryQuery(app: "a")).records
        #expect(Set(history.compactMap(\.reason)) == ["UNREGISTERED", "SENDER_ID_MISMATCH"])
        #expect(history.allSatisfy { $0.service == .fcm && $0.kind == .tokenDead })
        #expect(try registry.pruneCounts().allSatisfy { $0.service == .fcm })
        #expect(try registry.deliveryCounts() == [
            DeliveryCount(app: "a", service: .fcm, status: 403, reason: "SENDER_ID_MISMATCH", count: 1),
            DeliveryCount(app: "a", service: .fcm, status: 404, reason: "UNREGISTERED", count: 1),
        ])
    }

    /// A web device's outcomes carry its service into the delivery log and the webhook outbox (an APNs device's
    /// beside it say apns): the history, the recent log and the claimed event all read it back.
    @Test(arguments: Backend.allCases) func aWebPushOutcomeIsLoggedAndAnnouncedWithItsService(_ backend: Backend) throws {
        let registry = try backend.open(clock: ManualClock())
        let sub = try Self.subscription("dead")
        let key = DeviceKey.of(sub)
        let apns = testToken(1, salt: 78)
        _ = try registry.registerBatch([RegistrationRequest(app: "a", subscription: sub)]).first?.get()
        _ = try registry.registerBatch([RegistrationRequest(app: "a", token: apns)]).first?.get()
        let gone = DeliveryOutcome(
            token: key, kind: .tokenDead, notificationId: "00000000-0000-0000-0000-000000000001", status: 410, reason: "Gone",
            attempts: 1, prune: PruneRequest(service: "410", status: 410), startedMs: 1, finishedMs: 2, service: .webpush)
        let refused = DeliveryOutcome(
            token: apns, kind: .rejected, notificationId: "00000000-0000-0000-0000-000000000002", status: 400, reason: "BadTopic",
            attempts: 1, startedMs: 1, finishedMs: 3)
        var batch = OutcomeBatch(app: "a", job: nil, outcomes: [gone, refused])
        batch.recordEvents = true
        #expect(try registry.deliveryStore.commit(batch).pruned == [key])

        let history = try registry.deliveries(DeliveryQuery(app: "a")).records
        #expect(history.map(\.token) == [apns, key])
        #expect(history.map(\.service) == [.apns, .webpush])
        #expect(try registry.recentDeliveries(app: "a", limit: 10).map(\.service) == [.apns, .webpush])
        let events = try registry.deliveryStore.claimWebhookEvents(app: "a", limit: 10, leaseMs: 5000)
        #expect(events.map(\.kind) == [.tokenPruned, .deliveryFailed])
        #expect(events.map(\.service) == [.webpush, .apns])
        #expect(events.first?.json["service"]?.stringValue == "webpush")
    }

    /// The upgrade that keeps the service in the history and the outbox (SQLite 16, PostgreSQL 13): rows and events
    /// written before it (every device was APNs then) read back as apns, and new ones keep their own service.
    @Test(arguments: Backend.allCases) func historyAndWebhookEventsFromBeforeTheUpgradeReadAsAPNs(_ backend: Backend) throws {
        let registry = try backend.open(clock: ManualClock())
        let token = testToken(2, salt: 78)
        _ = try registry.registerBatch([RegistrationRequest(app: "a", token: token)]).first?.get()
        var batch = OutcomeBatch(app: "a", job: nil, outcomes: [DeliveryOutcome(
            token: token, kind: .rejected, notificationId: "00000000-0000-0000-0000-000000000003", status: 400, reason: "BadTopic",
            attempts: 1, startedMs: 1, finishedMs: 2)])
        batch.recordEvents = true
        _ = try registry.deliveryStore.commit(batch)
        // The previous schema: without the service columns on the log and the outbox.
        let previous = backend == .sqlite ? 15 : 12
        try registry.executeRaw("""
            ALTER TABLE delivery_log DROP COLUMN service;
            ALTER TABLE webhook_events DROP COLUMN service;
            \(backend.countersWithoutServices);
            UPDATE schema_version SET version = \(previous)
            """)

        let upgraded = try backend.reopen(registry)
        #expect(try upgraded.schemaVersion() == backend.currentSchemaVersion)
        let old = try upgraded.deliveries(DeliveryQuery(app: "a")).records
        #expect(old.count == 1 && old.first?.service == .apns && old.first?.reason == "BadTopic")
        let events = try upgraded.deliveryStore.claimWebhookEvents(app: "a", limit: 10, leaseMs: 5000)
        #expect(events.count == 1 && events.first?.service == .apns && events.first?.json["service"]?.stringValue == "apns")
        // A web outcome after the upgrade keeps its service.
        var record = try #require(old.first)
        record.notificationId = "00000000-0000-0000-0000-000000000004"
        record.finishedMs = 5
        record.service = .webpush
        try upgraded.recordDeliveries([record])
        #expect(try upgraded.deliveries(DeliveryQuery(app: "a")).records.map(\.service) == [.webpush, .apns])
    }

    /// The upgrade that counts by service (SQLite 18, PostgreSQL 15): what the counters held before keeps no service
    /// (it cannot be split: the log need not hold every row they counted) and is not lost; what is counted after it
    /// is counted under the service that answered, apart from the old counts, on both backends.
    @Test(arguments: Backend.allCases) func countersFromBeforeTheUpgradeKeepNoServiceAndNewOnesCountPerService(_ backend: Backend) throws {
        let registry = try backend.open(clock: ManualClock())
        let (apns, web) = (testToken(3, salt: 79), try Self.subscription("counted"))
        _ = registry.registerBatch([RegistrationRequest(app: "a", token: apns), RegistrationRequest(app: "a", subscription: web)])
        func accepted(_ token: DeviceToken, _ service: PushService, _ n: Int) -> DeliveryOutcome {
            DeliveryOutcome(token: token, kind: .accepted, notificationId: "00000000-0000-0000-0000-00000000010\(n)", status: 200,
                            reason: nil, attempts: 1, startedMs: 1, finishedMs: 2, service: service)
        }
        let store = registry.deliveryStore
        _ = try store.commit(OutcomeBatch(app: "a", job: nil, outcomes: [accepted(apns, .apns, 1), accepted(DeviceKey.of(web), .webpush, 2)]))
        try registry.executeRaw(backend.countersWithoutServices + ";\nUPDATE schema_version SET version = \(backend.versionBeforeCounterServices)")

        let upgraded = try backend.reopen(registry)
        #expect(try upgraded.schemaVersion() == backend.currentSchemaVersion)
        #expect(try upgraded.deliveryCounts() == [DeliveryCount(app: "a", service: nil, status: 200, reason: nil, count: 2)])
        _ = try upgraded.deliveryStore.commit(OutcomeBatch(app: "a", job: nil, outcomes: [
            accepted(apns, .apns, 3), accepted(DeviceKey.of(web), .webpush, 4), accepted(DeviceKey.of(web), .webpush, 5),
        ]))
        #expect(try upgraded.deliveryCounts() == [
            DeliveryCount(app: "a", service: nil, status: 200, reason: nil, count: 2),
            DeliveryCount(app: "a", service: .apns, status: 200, reason: nil, count: 1),
            DeliveryCount(app: "a", service: .webpush, status: 200, reason: nil, count: 2),
        ])
        #expect(try upgraded.prune(app: "a", token: DeviceKey.of(web), PruneRequest(service: "410", status: 410)) == .deleted)
        #expect(try upgraded.pruneCounts() == [PruneCount(app: "a", service: .webpush, reason: "410", outcome: "deleted", count: 1)])
    }

    /// The upgrade that adds push services (SQLite 15, PostgreSQL 12): every device of the previous schema becomes
    /// an APNs device with nothing else changed, and a broadcast left unfinished before it (a claimed shard with a
    /// checkpoint, interrupted) resumes after it and completes with exact counts.
    @Test(arguments: Backend.allCases) func devicesBecomeAPNsUnchangedAndAnUnfinishedBroadcastResumesAcrossTheUpgrade(_ backend: Backend) throws {
        let clock = ManualClock()
        let registry = try backend.open(clock: clock)
        let tokens = (0..<10).map { testToken($0, salt: 77) }.sorted()
        var requests = tokens.enumerated().map { i, token in
            RegistrationRequest(app: "a", token: token, channels: i % 2 == 0 ? ["even"] : nil, environment: i % 3 == 0 ? .development : .production)
        }
        requests[1].installation.locale = .set("de-DE")
        requests[2].installation.user = .set("u1")
        for r in registry.registerBatch(requests) { _ = try r.get() }
        try registry.createBroadcast(
            BroadcastRecord(id: "b", app: "a", payload: Array(#"{"aps":{"alert":"x"}}"#.utf8), pushType: .alert, priority: .immediate),
            tokens: nil)
        let store = registry.deliveryStore
        _ = try store.startBroadcast(id: "b", shardSize: 1000, newRound: true)
        let old = try #require(try store.claimShard(broadcastId: "b", apps: nil, owner: "old", ttlMs: 1000, ownerIsDead: { _ in false }))
        // The old version sent the first five, committed them with its checkpoint, and was interrupted.
        _ = try store.commit(OutcomeBatch(app: "a", job: .init(
            id: "b", shard: old.index, fence: old.fence, run: old.run, checkpoint: tokens[4].hex,
            accepted: AcceptedTally(count: 5, retried: 0, possiblyDuplicated: 0)), outcomes: []))
        let end = ShardEnd.released(error: "APNs unreachable", retryAfterMs: 0, mainDone: false, settledDispatched: nil)
        #expect(try store.finishShard(id: "b", index: old.index, fence: old.fence, end: end) == .interrupted)
        let before = try registry.list(app: "a")
        let installations = try tokens.map { try registry.installation(app: "a", token: $0) }
        // The previous schema: without the service columns (the later migration's on the log and outbox go too).
        let previous = backend == .sqlite ? 14 : 11
        let later = "ALTER TABLE delivery_log DROP COLUMN service;\nALTER TABLE webhook_events DROP COLUMN service;\n"
            + backend.countersWithoutServices + ";\n"
        try registry.executeRaw(later + (backend == .sqlite
            ? "ALTER TABLE devices DROP COLUMN subscription;\nALTER TABLE devices DROP COLUMN service;\nUPDATE schema_version SET version = \(previous)"
            : "ALTER TABLE devices DROP COLUMN subscription, DROP COLUMN service;\nUPDATE schema_version SET version = \(previous)"))

        let upgraded = try backend.reopen(registry)
        #expect(try upgraded.schemaVersion() == backend.currentSchemaVersion)
        let after = try upgraded.list(app: "a")
        #expect(after == before)
        #expect(after.count == 10 && after.allSatisfy { $0.service == .apns && $0.webPush == nil })
        #expect(try tokens.map { try upgraded.installation(app: "a", token: $0) } == installations)
        #expect(try upgraded.count(app: "a", channel: "even", environment: nil) == 5)

        // Resumed: the next claim starts after the checkpoint, its targets are APNs devices, and it completes.
        let resumed = upgraded.deliveryStore
        _ = try resumed.startBroadcast(id: "b", shardSize: 1000, newRound: true)
        let shard = try #require(try resumed.claimShard(broadcastId: "b", apps: nil, owner: "new", ttlMs: 30_000, ownerIsDead: { _ in false }))
        #expect(shard.checkpoint == tokens[4].hex)
        let record = try #require(try resumed.broadcast(id: "b"))
        let rest = try upgraded.targets(of: record, after: shard.checkpoint, through: shard.hi, limit: 100)
        #expect(rest.map(\.token) == Array(tokens[5...]))
        #expect(rest.allSatisfy { $0.service == .apns && $0.webPush == nil })
        _ = try resumed.commit(OutcomeBatch(app: "a", job: .init(
            id: "b", shard: shard.index, fence: shard.fence, run: shard.run, checkpoint: BroadcastShard.keySpaceEnd,
            accepted: AcceptedTally(count: rest.count, retried: 0, possiblyDuplicated: 0)), outcomes: []))
        #expect(try resumed.finishShard(id: "b", index: shard.index, fence: shard.fence, end: .finished) == .completed)
        let counts = try resumed.counts(id: "b")
        #expect(counts.done == 10 && counts.accepted == 10)
    }
}
