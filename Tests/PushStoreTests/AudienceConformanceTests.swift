import Foundation
import PushCore
import Testing

@testable import PushStore
import TestSupport

/// Installations, users and audiences on both backends: the fields registration stores (kept, cleared, carried
/// over), a user's devices through the user index (the query plan says so), audiences counted and paged exactly
/// as `Audience.matches` says, and local-time waves that take every device exactly once however its zone changes.
@Suite struct AudienceConformanceTests {
    func request(_ app: String, _ token: DeviceToken, old: DeviceToken? = nil, _ fields: [String: JSONValue]) throws -> RegistrationRequest {
        var r = RegistrationRequest(app: app, token: token, oldToken: old, environment: .production)
        for (k, v) in fields { try r.installation.set(k, json: v, zones: SystemTimeZones.names) }
        return r
    }

    func register(_ registry: any RegistryStore, _ r: RegistrationRequest) throws {
        for result in registry.registerBatch([r]) { _ = try result.get() }
    }

    @Test(arguments: Backend.allCases) func fieldsAreKeptWhenLeftOutClearedByNullAndCarriedOverByAReplacement(_ backend: Backend) throws {
        let registry = try backend.open(clock: ManualClock())
        let (a, b) = (testToken(1), testToken(2))
        try register(registry, try request("x", a, [
            "installation": .string("inst-1"), "user": .string("42"), "timeZone": .string("Europe/Berlin"),
            "locale": .string("de_DE"), "appVersion": .string("2.10"), "osVersion": .string("17.2"),
            "tags": .object([("plan", .string("pro")), ("score", .int(12))]),
        ]))
        let stored = try #require(try registry.installation(app: "x", token: a))
        #expect(stored == Installation(
            installation: "inst-1", user: "42", timeZone: "Europe/Berlin", locale: "de-DE", appVersion: "2.10", osVersion: "17.2",
            tags: ["plan": .string("pro"), "score": .number(12)]))
        // A token-only launch keeps everything; null clears just that field.
        try register(registry, RegistrationRequest(app: "x", token: a))
        #expect(try registry.installation(app: "x", token: a) == stored)
        try register(registry, try request("x", a, ["user": .null, "appVersion": .string("2.11")]))
        var expected = stored
        expected.user = nil
        expected.appVersion = "2.11"
        #expect(try registry.installation(app: "x", token: a) == expected)
        // APNs rotated the token: the new one is the same installation.
        try register(registry, try request("x", b, old: a, ["locale": .string("fr")]))
        #expect(try registry.installation(app: "x", token: a) == nil)
        expected.locale = "fr"
        #expect(try registry.installation(app: "x", token: b) == expected)
        // The new version's order key moved with it: the audience sees 2.11.
        #expect(try registry.countAudience(app: "x", environment: nil, audience: Audience.parse(where: ["appVersion > 2.10"])) == 1)
    }

    @Test(arguments: Backend.allCases) func aUsersDevicesAreOneRangeOfTheUserIndexAndCanBeDetached(_ backend: Backend) throws {
        let registry = try backend.open(clock: ManualClock())
        var requests: [RegistrationRequest] = []
        for i in 0..<400 {
            requests.append(try request("x", testToken(i), i < 300 ? ["user": .string("u\(i % 150)")] : [:]))
        }
        for r in registry.registerBatch(requests) { _ = try r.get() }
        try register(registry, try request("y", testToken(9999), ["user": .string("u7")]))  // another app's user 7
        if let postgres = registry as? PostgresRegistry { try postgres.analyze() }
        let devices = try registry.userDevices(app: "x", user: "u7", after: "", limit: 10)
        #expect(devices.map(\.token.hex) == [testToken(7), testToken(157)].map(\.hex).sorted())
        #expect(devices.allSatisfy { $0.installation.user == "u7" })
        #expect(try registry.userDevices(app: "x", user: "u7", after: devices[0].token.hex, limit: 10).count == 1)
        // A send to one user reads the user's range of devices_user, not the app's devices.
        let plan = try registry.audiencePlan(app: "x", audience: Audience.parse(where: [], user: "u7"))
        #expect(plan.contains("devices_user"), "plan: \(plan)")
        let segment = try registry.audiencePlan(app: "x", audience: Audience.parse(where: ["locale = de*"]))
        #expect(!segment.contains("devices_user"), "plan: \(segment)")
        // A forced log-out detaches the user everywhere; the devices stay.
        #expect(try registry.detachUser(app: "x", user: "u7") == 2)
        #expect(try registry.userDevices(app: "x", user: "u7", after: "", limit: 10).isEmpty)
        #expect(try registry.userDevices(app: "y", user: "u7", after: "", limit: 10).count == 1)
        #expect(try registry.count(app: "x", channel: nil, environment: nil) == 400)
    }

    /// A population with every field and mixed values, and audiences counted by the store and by
    /// `Audience.matches`: they agree, clause by clause, on both backends.
    @Test(arguments: Backend.allCases) func audiencesSelectExactlyWhatTheLanguageSays(_ backend: Backend) throws {
        let registry = try backend.open(clock: ManualClock())
        let zones = ["Europe/Berlin", "America/New_York", "Asia/Tokyo", nil]
        let locales = ["de-DE", "de-AT", "en-US", "fr", nil]
        let versions = ["2.9", "2.10", "2.3", "2.3.1", "10.0", "beta", nil]
        var subjects: [DeviceToken: AudienceSubject] = [:]
        for i in 0..<210 {
            var fields: [String: JSONValue] = [:]
            if let z = zones[i % zones.count] { fields["timeZone"] = .string(z) }
            if let l = locales[i % locales.count] { fields["locale"] = .string(l) }
            if let v = versions[i % versions.count] { fields["appVersion"] = .string(v) }
            if i % 3 == 0 { fields["user"] = .string("u\(i % 9)") }
            if i % 2 == 0 { fields["tags"] = .object([("plan", .string(i % 4 == 0 ? "pro" : "free")), ("score", .int(Int64(i % 20))), ("beta", .bool(i % 8 == 0))]) }
            if i % 5 == 0 { fields["osVersion"] = .string("17.\(i % 3)") }
            var r = try request("x", testToken(i), fields)
            if i % 7 == 3 {  // a Web Push device, under its endpoint's key
                let subscription = try WebPushRegistryConformanceTests.subscription("device-\(i)")
                (r.token, r.subscription) = (DeviceKey.of(subscription), subscription)
            }
            r.environment = i % 4 == 0 ? .development : .production
            r.channels = i % 6 == 0 ? ["news"] : (i % 6 == 1 ? ["news", "sports"] : nil)
            try register(registry, r)
            let installation = try #require(try registry.installation(app: "x", token: r.token))
            subjects[r.token] = AudienceSubject(
                environment: r.environment!, channels: r.channels ?? [], installation: installation, service: r.service)
        }
        let audiences: [[String]] = [
            ["appVersion >= 2.3"], ["appVersion >= 2.9", "appVersion < 10"], ["appVersion > 2.3"], ["osVersion <= 17.1"],
            ["locale = de*"], ["locale in fr,en-US"], ["locale missing"], ["timeZone = America/*"], ["timeZone exists"],
            ["user = u3"], ["user exists", "locale = de*"], ["user in u0,u6"], ["channel = news"], ["channel in sports"],
            ["channel missing"], ["environment = development"], ["tags.plan = pro"], ["tags.score >= 10"], ["tags.score < 5", "tags.beta = true"],
            ["tags.plan missing"], ["tags.plan = fr*"], ["channel = news", "appVersion >= 2.3", "locale = de*"],
            ["service = webpush"], ["service = apns"], ["service in webpush,fcm", "channel = news"], ["service = fcm"],
            ["service = \"apns\"", "locale = de*", "environment = production"],
        ]
        for clauses in audiences {
            let audience = try Audience.parse(where: clauses)
            let expected = subjects.filter { audience.matches($0.value) }.keys.map(\.hex).sorted()
            #expect(try registry.countAudience(app: "x", environment: nil, audience: audience) == expected.count, "\(clauses)")
            var record = BroadcastRecord(id: "a", app: "x", payload: [], pushType: .alert, priority: .immediate)
            record.targeting = JobTargeting(audience: audience)
            var paged: [String] = []
            var after = ""
            while true {
                let page = try registry.deliveryStore.targets(of: record, after: after, through: BroadcastShard.keySpaceEnd, limit: 7)
                paged += page.map(\.token.hex)
                #expect(page.allSatisfy { $0.service == subjects[$0.token]?.service && ($0.webPush != nil) == ($0.service == .webpush) })
                guard let last = page.last, page.count == 7 else { break }
                after = last.token.hex
            }
            #expect(paged == expected, "\(clauses)")
        }
        #expect(try registry.countAudience(app: "x", environment: .development, audience: Audience.parse(where: ["locale = de*"]))
            == subjects.filter { $0.value.environment == .development && ($0.value.installation.locale ?? "").hasPrefix("de") }.count)
    }

    /// Waves ask for each device's zone at the job's reference instant: a device that moves between waves (even
    /// twice) is in exactly one wave, and nothing is written per device for it.
    @Test(arguments: Backend.allCases) func everyDeviceIsInExactlyOneWaveHoweverItsZoneChanges(_ backend: Backend) throws {
        let clock = ManualClock(1_798_000_000_000)
        let registry = try backend.open(clock: clock)
        let zones = ["Asia/Tokyo", "Europe/Berlin", "America/New_York"]
        for i in 0..<30 {
            try register(registry, try request("x", testToken(i), i % 4 == 3 ? [:] : ["timeZone": .string(zones[i % 3])]))
        }
        let reference = clock.now + 60_000
        let groups: [(zones: [String], unzoned: Bool)] = [(["Asia/Tokyo"], false), (["Europe/Berlin"], false), (["America/New_York", "UTC"], true)]
        func members() throws -> [[String]] {
            try groups.enumerated().map { index, group in
                var record = BroadcastRecord(id: "w\(index)", app: "x", payload: [], pushType: .alert, priority: .immediate)
                record.targeting = JobTargeting(wave: LocalTimeWave(
                    job: "j", index: index, zones: group.zones, includesUnzoned: group.unzoned, referenceMs: reference))
                return try registry.deliveryStore.targets(of: record, after: "", through: BroadcastShard.keySpaceEnd, limit: 1000).map(\.token.hex)
            }
        }
        let before = try members()
        #expect(before.flatMap { $0 }.count == 30 && Set(before.flatMap { $0 }).count == 30)
        // After the reference instant, devices move: Tokyo → New York, Berlin → Tokyo → Berlin, an unzoned one gets
        // a zone, one loses its zone.
        clock.advance(120_000)
        try register(registry, try request("x", testToken(0), ["timeZone": .string("America/New_York")]))
        try register(registry, try request("x", testToken(1), ["timeZone": .string("Asia/Tokyo")]))
        clock.advance(1000)
        try register(registry, try request("x", testToken(1), ["timeZone": .string("Europe/Berlin")]))
        try register(registry, try request("x", testToken(3), ["timeZone": .string("Asia/Tokyo")]))
        try register(registry, try request("x", testToken(2), ["timeZone": .null]))
        #expect(try members() == before)
        // A device first registered after the reference instant is in its current zone's wave.
        try register(registry, try request("x", testToken(100), ["timeZone": .string("Asia/Tokyo")]))
        let after = try members()
        #expect(after[0] == (before[0] + [testToken(100).hex]).sorted())
        #expect(after[1] == before[1] && after[2] == before[2])
        // A job whose reference instant is after the moves sees the new zones.
        #expect(try registry.installation(app: "x", token: testToken(0))?.timeZone == "America/New_York")
    }
}
