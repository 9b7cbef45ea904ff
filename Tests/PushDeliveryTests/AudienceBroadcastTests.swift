import Foundation
import PushCore
import PushDelivery
import PushStore
import Testing
import TestSupport

/// An audience broadcast is a broadcast whose pages are filtered: sharded over the matching devices only, resumed
/// after a stop without sending twice, each device getting its locale's payload — and an accepted device still
/// writes nothing of its own.
@Suite(.timeLimit(.minutes(2))) struct AudienceBroadcastTests {
    @Test func anAudienceBroadcastIsShardedResumedAndSpeaksEachDevicesLanguage() async throws {
        let f = try await EngineFixture.start()
        let tokens = EngineFixture.tokens(2000, prefix: "dd")
        var requests: [RegistrationRequest] = []
        for (i, token) in tokens.enumerated() {
            var r = RegistrationRequest(app: "example", token: token, environment: .development)
            try r.installation.set("appVersion", text: i % 2 == 0 ? "2.10" : "2.2", zones: SystemTimeZones.names)
            try r.installation.set("locale", text: ["de-DE", "fr", "en-US"][i % 3], zones: SystemTimeZones.names)
            requests.append(r)
        }
        let registry = f.registry
        let batch = requests
        for result in try await registry.run({ _ in registry.registerBatch(batch) }) { _ = try result.get() }
        let matching = Set(tokens.enumerated().filter { $0.offset % 2 == 0 }.map(\.element))
        let prepared = try Payload(aps: APS(alert: .text("Hello"))).prepare()
        var record = BroadcastRecord(id: "seg", app: "example", payload: prepared.payload, pushType: prepared.pushType, priority: prepared.priority)
        let german = try Payload(aps: APS(alert: .text("Hallo"))).prepare().payload
        record.targeting = JobTargeting(audience: try Audience.parse(where: ["appVersion >= 2.3"]), variants: ["de": german])
        let created = record
        try await registry.run { _ in try registry.createBroadcast(created) }
        var configuration = BroadcastConfiguration()
        configuration.shardSize = 300
        configuration.batchSize = 100
        let broadcaster = Broadcaster(store: f.store, configuration: configuration)
        let stop = StopFlag()
        let sender = f.makeSender(window: 50, answerDelay: .milliseconds(1))
        let first = try await broadcaster.run(
            id: "seg", sender: sender, stop: stop, progressInterval: 0.02, progress: { if $0.done >= 300 { stop.raise(signal: SIGTERM) } })
        await sender.shutdown()
        #expect(first.record.state == .interrupted)
        #expect(first.record.total == 1000)
        #expect(try blocking { try f.store.shards(id: "seg") }.count == 4)  // 1000 matching devices in shards of 300
        let second = try await f.run("seg")
        #expect(second.record.state == .completed)
        #expect(second.counts.accepted == 1000 && second.counts.possiblyDuplicated == 0)
        let received = f.received
        #expect(received.count == 1000)
        #expect(Set(received.map(\.token)) == matching)
        let byToken = Dictionary(uniqueKeysWithValues: tokens.enumerated().map { ($0.element, $0.offset) })
        for request in received {
            let i = try #require(byToken[request.token])
            #expect(request.payload == (i % 3 == 0 ? german : prepared.payload))
        }
        // Nothing per accepted device: no outcome rows.
        #expect(try blocking { try f.store.storedOutcomes(id: "seg", after: "", through: BroadcastShard.keySpaceEnd) }.isEmpty)
        try await f.stop()
    }
}
