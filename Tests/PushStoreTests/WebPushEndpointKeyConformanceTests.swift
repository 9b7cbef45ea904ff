import Foundation
import PushCore
import Testing

@testable import PushStore
import TestSupport

/// One endpoint is one device, on both backends: the spellings of one endpoint register one device under the key of
/// its canonical form, and the upgrade that introduces that form (SQLite 17, PostgreSQL 14) re-keys the devices an
/// older build stored under a spelling and merges those that are one endpoint, the newest registration winning.
@Suite struct WebPushEndpointKeyConformanceTests {
    static func subscription(_ endpoint: String, seed: UInt8 = 1) throws -> WebPushSubscription {
        try WebPushSubscription(
            endpoint: WebPushEndpoint(parsing: endpoint),
            p256dh: [0x04] + [UInt8](repeating: seed, count: 64), auth: [UInt8](repeating: seed &+ 1, count: 16))
    }

    @Test(arguments: Backend.allCases) func threeSpellingsOfOneEndpointRegisterOneDevice(_ backend: Backend) throws {
        let clock = ManualClock()
        let registry = try backend.open(clock: clock)
        let spellings = ["https://web.push.apple.com:443/x", "https://web.push.apple.com/x", "HTTPS://WEB.push.apple.com/x"]
        var outcomes: [RegistrationOutcome] = []
        for (i, text) in spellings.enumerated() {
            clock.advance(10)
            outcomes.append(try registry.registerBatch([RegistrationRequest(app: "a", subscription: try Self.subscription(text, seed: UInt8(i + 1)))])[0].get())
        }
        #expect(outcomes == [.created, .updated, .updated])
        #expect(try registry.count(app: "a", channel: nil, environment: nil) == 1)
        let key = DeviceKey.webPush(endpointURL: "https://web.push.apple.com/x")
        #expect(Set(spellings.map { DeviceKey.webPush(endpointURL: $0) }) == [key])
        let device = try #require(try registry.device(app: "a", token: key))
        #expect(device.webPush?.endpoint.url == "https://web.push.apple.com/x")
        #expect(device.webPush?.p256dh == [0x04] + [UInt8](repeating: 3, count: 64))  // the latest registration's keys
        // A replacement may name the old endpoint in another spelling.
        let next = try Self.subscription("https://web.push.apple.com/y")
        #expect(try registry.registerBatch([RegistrationRequest(app: "a", subscription: next, oldEndpoint: "https://WEB.PUSH.APPLE.COM:443/x")])[0]
            .get() == .replaced(key))
        #expect(try registry.list(app: "a").map(\.token) == [DeviceKey.of(next)])
    }

    @Test(arguments: Backend.allCases) func theUpgradeRekeysStoredSpellingsAndMergesOneEndpointsDevicesKeepingTheNewest(_ backend: Backend) throws {
        let clock = ManualClock()
        let registry = try backend.open(clock: clock)
        let apns = testToken(1, salt: 55)
        try registry.add(app: "a", token: apns)
        // Four canonical devices as this build registers them; below, three of them are rewritten as an older build
        // stored the spellings of one endpoint (.../a), and the fourth under a spelling of its own.
        let paths = ["a", "b", "c", "d"]
        for (i, path) in paths.enumerated() {
            clock.advance(100)
            var request = RegistrationRequest(
                app: "a", subscription: try Self.subscription("https://web.push.apple.com/\(path)", seed: UInt8(i + 1)), channels: [path])
            request.installation.locale = .set("\(["fr", "de", "it", "es"][i])-XX")
            _ = try registry.registerBatch([request])[0].get()
        }
        // The same for another app: its device of the same endpoint is not merged with app a's.
        _ = try registry.registerBatch([RegistrationRequest(app: "other", subscription: try Self.subscription("https://web.push.apple.com/a"))])[0].get()
        let hex = { (path: String) in DeviceKey.webPush(endpointURL: "https://web.push.apple.com/\(path)").hex }
        let old = [("b", "HTTPS://web.push.apple.com:443/a", testToken(2, salt: 55).hex),
                   ("c", "https://WEB.push.apple.com:0443/a", testToken(3, salt: 55).hex),
                   ("d", "https://web.push.apple.com:443/d", testToken(4, salt: 55).hex)]
        var sql = old.map { path, spelling, token in
            """
            UPDATE devices SET token = '\(token)', subscription = replace(subscription, 'https://web.push.apple.com/\(path)', '\(spelling)') WHERE app = 'a' AND token = '\(hex(path))';
            UPDATE device_channels SET token = '\(token)' WHERE app = 'a' AND token = '\(hex(path))'
            """
        }
        sql.append(backend.countersWithoutServices)
        sql.append("UPDATE schema_version SET version = \(backend == .sqlite ? SQLiteSchema.rekeyingMigration : PostgresSchema.rekeyingMigration)")
        try registry.executeRaw(sql.joined(separator: ";\n"))

        let upgraded = try backend.reopen(registry)
        #expect(try upgraded.schemaVersion() == backend.currentSchemaVersion)
        // App a: the APNs device, one device for .../a (c's row: registered last) and d's under its canonical key.
        #expect(Set(try upgraded.list(app: "a").map(\.token.hex)) == [apns.hex, hex("a"), hex("d")])
        let merged = try #require(try upgraded.device(app: "a", token: DeviceKey.webPush(endpointURL: "https://web.push.apple.com/a")))
        #expect(merged.webPush?.endpoint.url == "https://web.push.apple.com/a")
        #expect(merged.webPush?.p256dh == [0x04] + [UInt8](repeating: 3, count: 64) && merged.channels == ["c"])
        #expect(try upgraded.installation(app: "a", token: merged.token)?.locale == "it-XX")
        let d = try #require(try upgraded.device(app: "a", token: DeviceKey.webPush(endpointURL: "https://web.push.apple.com/d")))
        #expect(d.channels == ["d"] && d.webPush?.endpoint.url == "https://web.push.apple.com/d")
        // The channel index follows the keys: a channel broadcast reaches each device once, under its new key.
        func channel(_ name: String) throws -> [String] {
            try upgraded.targetPage(app: "a", channel: name, environment: nil, after: "", through: BroadcastShard.keySpaceEnd, limit: 10)
                .map(\.token.hex)
        }
        #expect(try channel("c") == [hex("a")] && channel("d") == [hex("d")])
        #expect(try channel("a").isEmpty && channel("b").isEmpty)
        #expect(try upgraded.count(app: "a", channel: nil, environment: nil) == 3)
        #expect(try upgraded.list(app: "other").map(\.token.hex) == [hex("a")])
        // Registering any spelling of it again updates the merged device.
        #expect(try upgraded.registerBatch([RegistrationRequest(app: "a", subscription: try Self.subscription("https://web.push.apple.com:443/a", seed: 3))])[0]
            .get() == .updated)
    }
}
