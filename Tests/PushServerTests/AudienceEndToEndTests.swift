import PushSimulator
import Foundation
import PushCore
import PushDelivery
import PushSender
import PushServer
import PushStore
import Synchronization
import Testing
import TestSupport

/// Installations, users, audiences, local time and per-locale text end to end: a real server over real sockets, the
/// real simulator, on SQLite and on PostgreSQL, with the store's clock (and the simulator's) under the test's
/// control. Three users with two devices each, in three UTC offsets and three locales, on mixed app versions.
@Suite(.serialized, .timeLimit(.minutes(5))) struct AudienceEndToEndTests {
    enum Store: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case sqlite, postgres
        var testDescription: String { rawValue }
    }

    final class Clock: Sendable {
        let ms: Atomic<Int64>
        init(_ start: Int64) { ms = Atomic(start) }
        var now: Int64 { ms.load(ordering: .relaxed) }
        func set(_ value: Int64) { ms.store(value, ordering: .relaxed) }
    }

    static let secret = Array("user-secret-of-example".utf8)

    struct World {
        let dir: String
        let clock: Clock
        let simulator: PushSimulator
        let server: TestServer
        let store: any RegistryStore

        func stop() async throws {
            try await server.running.shutdown()
            try await simulator.stop()
            try? FileManager.default.removeItem(atPath: dir)
        }

        func register(_ json: String, key: String = "reg") async throws -> TestServer.Reply {
            try await server.request("POST", "/v1/apps/example/devices", key: key, contentType: "application/json", body: json)
        }

        func post(_ json: String) async throws -> TestServer.Reply {
            try await server.request("POST", "/v1/apps/example/notifications", key: "send", contentType: "application/json", body: json)
        }

        func status(_ id: String) async throws -> JSONValue {
            try #require(try await server.request("GET", "/v1/apps/example/notifications/\(id)", key: "send").json)
        }

        /// Waits until every wave of job `id` due by the store's clock has completed (or the job is `state`).
        func settle(_ id: String, _ done: (JSONValue) -> Bool) async throws -> JSONValue {
            var last = JSONValue.null
            do {
                try await waitUntil(deadline: .seconds(60), every: .milliseconds(50), "job \(id) settled") {
                    last = try await status(id)
                    return done(last)
                }
            } catch is WaitTimedOut {
                Issue.record("job \(id) did not settle: \(last.encodedString)")
            }
            return last
        }

        /// What the simulator received for job `collapseId`, by token.
        func received(collapse: String) -> [String: [ReceivedNotification]] {
            Dictionary(grouping: simulator.received.filter { $0.request.collapseId == collapse }, by: { $0.request.token.hex })
        }
    }

    static func world(_ kind: Store, start: Int64) async throws -> World {
        let dir = NSTemporaryDirectory() + "audience-" + UUID().uuidString
        let certs = dir + "/certs"
        try DevCertificates.make(in: certs, options: .init(topic: "com.example.app"))
        let pem = try SimulatorConfiguration.pemFiles(in: certs)
        let clock = Clock(start)
        let simulator = try PushSimulator(configuration: SimulatorConfiguration(
            host: "127.0.0.1", port: 0, caPEM: pem.ca, serverCertificatePEM: pem.certificate, serverKeyPEM: pem.key,
            clientAuth: .certificate, receivedLimit: 100_000, clock: { clock.now }))
        let port = try await simulator.start()
        var app = AppSettings(
            topic: "com.example.app", endpoint: .simulator,
            auth: .certificate(p12: certs + "/client.p12", password: .file(certs + "/client.p12.password")),
            registrationKeys: [APIKeys.hash("reg")], sendKeys: [APIKeys.hash("send")])
        app.defaultTimeZone = "UTC"
        var config = PushConfiguration(
            database: dir + "/registry.sqlite", server: ServerSettings(host: "127.0.0.1", port: 0),
            simulator: SimulatorSettings(host: "127.0.0.1", port: port, certificates: certs), apps: ["example": app])
        let store: any RegistryStore
        switch kind {
        case .sqlite:
            store = try SQLiteRegistry(path: config.database, nowMs: { clock.now })
        case .postgres:
            config.database = try await PostgresTestServer.shared().makeDatabase("audience")
            store = try PostgresRegistry(url: PostgresURL(parsing: config.database), password: nil, connections: 4, nowMs: { clock.now })
        }
        var jobSettings = JobRunner.Settings()
        jobSettings.scheduleCheckSeconds = 0.05
        let server = PushServer(
            configuration: config, registry: store, keys: APIKeys(apps: config.apps),
            credentials: ["example": .init(loaded: true, kind: "certificate", daysLeft: 365)], jobSettings: jobSettings,
            userSecrets: ["example": secret])
        let running = try await server.start(host: "127.0.0.1", port: 0)
        return World(
            dir: dir, clock: clock, simulator: simulator,
            server: TestServer(running: running, store: store, directory: URL(fileURLWithPath: dir + "/unused")), store: store)
    }

    static func token(_ name: String) -> String {
        let hex = Array(name.utf8).map { String($0, radix: 16) }.joined()
        return hex + String(repeating: "0", count: 64 - hex.count)
    }

    static func proof(_ user: String) -> String { UserAuth.proof(user: user, secret: secret, mac: hmacSHA256) }

    /// user, device, zone, locale, app version.
    static let devices: [(user: String, name: String, zone: String, locale: String, version: String)] = [
        ("alice", "alice-1", "Asia/Tokyo", "de-DE", "2.10"),
        ("alice", "alice-2", "Europe/Berlin", "en-US", "2.2"),
        ("bob", "bob-1", "Europe/Berlin", "de-DE", "2.3"),
        ("bob", "bob-2", "America/New_York", "fr-FR", "2.9"),
        ("carol", "carol-1", "America/New_York", "en-US", "2.3.1"),
        ("carol", "carol-2", "Asia/Tokyo", "fr-FR", "1.9"),
    ]

    @Test func thePreviewShowsEveryLocalesPayloadAndATooLargeVariantNamesItsLocale() async throws {
        let s = try await TestServer.start()
        let r = try await s.request(
            "POST", "/v1/apps/example/payload-preview", key: TestServer.sendKey, contentType: "application/json",
            body: #"{"title":{"default":"Sale","de":"Ausverkauf"},"alert":{"default":"Today","de-AT":"Heute","fr":"Aujourd'hui"}}"#)
        #expect(r.status == 200, "\(String(decoding: r.body, as: UTF8.self))")
        let json = try #require(r.json)
        #expect(json["payload"] == (try JSONValue(parsing: #"{"aps":{"alert":{"title":"Sale","body":"Today"}}}"#)))
        let variants = try #require(json["variants"]?.objectPairs)
        #expect(variants.map(\.0) == ["de", "de-AT", "fr"])
        #expect(json["variants"]?["de-AT"]?["payload"] == (try JSONValue(parsing: #"{"aps":{"alert":{"title":"Ausverkauf","body":"Heute"}}}"#)))
        #expect(json["variants"]?["de"]?["payload"] == (try JSONValue(parsing: #"{"aps":{"alert":{"title":"Ausverkauf","body":"Today"}}}"#)))
        #expect(json["variants"]?["fr"]?["bytes"] == .int(Int64(#"{"aps":{"alert":{"title":"Sale","body":"Aujourd'hui"}}}"#.utf8.count)))
        // A variant too large for APNs (a title is never shortened) is refused before anything is stored, naming its locale.
        let long = String(repeating: "x", count: 5000)
        let big = try await s.request(
            "POST", "/v1/apps/example/notifications", key: TestServer.sendKey, contentType: "application/json",
            body: #"{"id":"big","all":true,"alert":"ok","title":{"default":"ok","fr":"\#(long)"}}"#)
        #expect(big.status == 400, "\(String(decoding: big.body, as: UTF8.self))")
        #expect(big.json?["error"]?["message"]?.stringValue?.contains("locale fr") == true)
        #expect(try blocking { try s.store.broadcast(id: "big") } == nil)
        let noDefault = try await s.request(
            "POST", "/v1/apps/example/payload-preview", key: TestServer.sendKey, contentType: "application/json", body: #"{"alert":{"de":"Hallo"}}"#)
        #expect(noDefault.status == 400 && noDefault.errorCode == "invalid_alert")
        try await s.stop()
    }

    /// Names iOS reports that Foundation's list on Linux lacked register through the API (JSON and the seed's form
    /// body), and an old name is stored as its canonical zone (tzdata's `backward` link).
    @Test func theTzDatabasesZonesAndLinksRegisterAsTheirCanonicalZone() async throws {
        let w = try await Self.world(.sqlite, start: 1_796_085_000_000)
        let cases = [
            ("Asia/Kolkata", "Asia/Kolkata"), ("Etc/UTC", "Etc/UTC"), ("Asia/Calcutta", "Asia/Kolkata"), ("UTC", "Etc/UTC"),
            ("Etc/GMT-14", "Etc/GMT-14"), ("America/Buenos_Aires", "America/Argentina/Buenos_Aires"),
        ]
        for (i, (given, stored)) in cases.enumerated() {
            let t = Self.token("tz-\(i)")
            let reply: TestServer.Reply
            if i == 2 {
                reply = try await w.server.request(
                    "POST", "/v1/apps/example/devices", key: "reg", contentType: "application/x-www-form-urlencoded",
                    body: "oldToken=(null)&newToken=<\(t)>&timeZone=\(given)")
            } else {
                reply = try await w.register(#"{"token":"\#(t)","timeZone":"\#(given)"}"#)
            }
            #expect(reply.status == 201, "\(given): \(String(decoding: reply.body, as: UTF8.self))")
            #expect(reply.json?["timeZone"]?.stringValue == stored, "\(given)")
        }
        for junk in ["GMT+2", "PST", "asia/kolkata"] {
            let reply = try await w.register(#"{"token":"\#(Self.token("junk"))","timeZone":"\#(junk)"}"#)
            #expect(reply.status == 400 && reply.errorCode == "invalid_timeZone", "\(junk)")
        }
        try await w.stop()
    }

    @Test(arguments: Store.allCases) func usersSegmentsAndLocalTimeReachExactlyTheirDevices(_ kind: Store) async throws {
        // 2026-12-01T00:30:00Z.
        let w = try await Self.world(kind, start: 1_796_085_000_000)

        // A registration key cannot claim a user without proof; a forged proof is refused; nothing is stored.
        let a1 = Self.token("alice-1")
        let unproven = try await w.register(#"{"token":"\#(a1)","user":"alice","timeZone":"Asia/Tokyo"}"#)
        #expect(unproven.status == 403 && unproven.errorCode == "forbidden_user")
        #expect(unproven.json?["error"]?["message"]?.stringValue?.hasPrefix("user:") == true)
        let forged = try await w.register(#"{"token":"\#(a1)","user":"alice","userAuth":"\#(Self.proof("bob"))"}"#)
        #expect(forged.status == 403 && forged.errorCode == "forbidden_user")
        #expect(try blocking { try w.store.device(app: "example", token: DeviceToken(parsing: a1)) } == nil)
        // A bad field is a 400 naming it, and nothing is stored either.
        let badZone = try await w.register(#"{"token":"\#(a1)","timeZone":"Mars/Base"}"#)
        #expect(badZone.status == 400 && badZone.errorCode == "invalid_timeZone")
        #expect(try blocking { try w.store.device(app: "example", token: DeviceToken(parsing: a1)) } == nil)

        // The six devices register with proofs (one through the seed's form body), plus one device without a zone.
        for (i, d) in Self.devices.enumerated() {
            let t = Self.token(d.name)
            let reply: TestServer.Reply
            if i == 2 {
                reply = try await w.server.request(
                    "POST", "/v1/apps/example/devices", key: "reg", contentType: "application/x-www-form-urlencoded",
                    body: "oldToken=(null)&newToken=<\(t)>&user=\(d.user)&userAuth=\(Self.proof(d.user))&timeZone=\(d.zone)&locale=\(d.locale)&appVersion=\(d.version)&installation=inst-\(d.name)")
            } else {
                reply = try await w.register(#"""
                    {"token":"\#(t)","user":"\#(d.user)","userAuth":"\#(Self.proof(d.user))","timeZone":"\#(d.zone)","locale":"\#(d.locale)","appVersion":"\#(d.version)","osVersion":"17.2","tags":{"plan":"pro"}}
                    """#)
            }
            #expect(reply.status == 201, "\(d.name): \(String(decoding: reply.body, as: UTF8.self))")
            #expect(reply.json?["user"]?.stringValue == d.user && reply.json?["timeZone"]?.stringValue == d.zone)
        }
        let loose = Self.token("loose")
        #expect(try await w.register(#"{"token":"\#(loose)","appVersion":"2.3"}"#).status == 201)
        // A send key may attach a user without a proof (the app's backend).
        #expect(try await w.register(#"{"token":"\#(Self.token("backend"))","user":"dave"}"#, key: "send").status == 201)
        #expect(try await w.server.request("DELETE", "/v1/apps/example/users/dave", key: "send").json?["detached"] == .int(1))

        // The user's devices, as the API lists them.
        let bobs = try await w.server.request("GET", "/v1/apps/example/users/bob/devices", key: "send")
        #expect(Set(bobs.json?["devices"]?.arrayValue?.compactMap { $0["token"]?.stringValue } ?? []) == [Self.token("bob-1"), Self.token("bob-2")])
        #expect(try await w.server.request("GET", "/v1/apps/example/users/bob/devices", key: "reg").status == 403)

        // A send to one user reaches exactly that user's devices.
        #expect(try await w.post(#"{"id":"to-bob","audience":{"user":"bob"},"alert":"Hi Bob"}"#).status == 202)
        _ = try await w.settle("to-bob") { $0["state"]?.stringValue == "completed" }
        #expect(Set(w.received(collapse: NotificationID.collapseId(forJob: "to-bob")).keys) == [Self.token("bob-1"), Self.token("bob-2")])

        // A segment reaches exactly the matching devices (version order: 2.10 >= 2.3), and counts as it will send.
        let segment = #"{"where":["appVersion >= 2.3","locale = de*"]}"#
        let count = try await w.server.request("POST", "/v1/apps/example/audience-count", key: "send", contentType: "application/json", body: #"{"audience":\#(segment)}"#)
        #expect(count.json?["count"] == .int(2))
        #expect(try await w.post(#"{"id":"seg","audience":\#(segment),"alert":"Neu"}"#).status == 202)
        _ = try await w.settle("seg") { $0["state"]?.stringValue == "completed" }
        #expect(Set(w.received(collapse: NotificationID.collapseId(forJob: "seg")).keys) == [Self.token("alice-1"), Self.token("bob-1")])
        // A bad audience is a 400 naming the clause; nothing is stored.
        let bad = try await w.post(#"{"id":"bad","audience":{"where":["appVersion >= 2.3","locale ~ de"]},"alert":"x"}"#)
        #expect(bad.status == 400 && bad.errorCode == "invalid_audience")
        #expect(bad.json?["error"]?["message"]?.stringValue?.contains("where[1]") == true)
        #expect(try blocking { try w.store.broadcast(id: "bad") } == nil)

        // Every device at 09:00 in its own zone, each with its locale's text.
        let lt = try await w.post(#"""
            {"id":"morning","all":true,"localTime":{"time":"09:00"},"alert":{"default":"Good morning","de":"Guten Morgen","fr":"Bonjour"}}
            """#)
        #expect(lt.status == 202 && lt.json?["state"]?.stringValue == "pending", "\(String(decoding: lt.body, as: UTF8.self))")
        let planned = try await w.status("morning")
        let waves = try #require(planned["waves"]?.arrayValue)
        #expect(waves.count > 30)
        let reference = try Timestamp.parse(try #require(waves.first?["at"]?.stringValue))
        func at(_ text: String) throws -> Int64 { try Timestamp.parse(text) }
        func waveDone(_ job: JSONValue, through ms: Int64) -> Bool {
            (job["waves"]?.arrayValue ?? []).allSatisfy { wave in
                guard let t = wave["at"]?.stringValue, let due = try? Timestamp.parse(t) else { return false }
                return due > ms || wave["state"]?.stringValue == "completed"
            }
        }
        let collapse = NotificationID.collapseId(forJob: "morning")
        // Past the first wave (the reference instant), two devices move: bob-2 New York → Tokyo, carol-2 Tokyo →
        // New York. Each still gets it once, in the wave of the zone it had when the job's first wave was due.
        w.clock.set(reference + 60_000)
        _ = try await w.settle("morning") { waveDone($0, through: reference + 60_000) }
        #expect(try await w.register(#"{"token":"\#(Self.token("bob-2"))","timeZone":"Asia/Tokyo"}"#).status == 200)
        #expect(try await w.register(#"{"token":"\#(Self.token("carol-2"))","timeZone":"America/New_York"}"#).status == 200)
        let steps: [(String, Set<String>)] = [
            ("2026-12-01T08:00:00Z", ["alice-2", "bob-1"]),  // Berlin
            ("2026-12-01T09:00:00Z", ["loose", "backend"]),  // UTC: devices without a zone (defaultTimeZone)
            ("2026-12-01T14:00:00Z", ["bob-2", "carol-1"]),  // New York
            ("2026-12-02T00:00:00Z", ["alice-1", "carol-2"]),  // Tokyo
        ]
        var seen: Set<String> = []
        for (time, names) in steps {
            let ms = try at(time)
            w.clock.set(ms - 1000)
            _ = try await w.settle("morning") { waveDone($0, through: ms - 1000) }
            #expect(Set(w.received(collapse: collapse).keys) == seen, "before \(time)")
            w.clock.set(ms)
            _ = try await w.settle("morning") { waveDone($0, through: ms) }
            let got = w.received(collapse: collapse)
            let wanted = seen.union(names.map(Self.token))
            #expect(Set(got.keys) == wanted, "at \(time)")
            for name in names {
                let copies = try #require(got[Self.token(name)])
                #expect(copies.count == 1, "\(name) got it \(copies.count) times")
                #expect(copies.first?.receivedAtMs == ms, "\(name) was sent in its wave")
                let locale = Self.devices.first { $0.name == name }?.locale
                let text = locale.map { $0.hasPrefix("de") ? "Guten Morgen" : $0.hasPrefix("fr") ? "Bonjour" : "Good morning" } ?? "Good morning"
                #expect(try JSONValue(parsing: try #require(copies.first).request.payload) == JSONValue(parsing: #"{"aps":{"alert":"\#(text)"}}"#), "\(name)")
            }
            seen = wanted
        }
        w.clock.set(try at("2026-12-02T12:00:00Z"))
        let final = try await w.settle("morning") { $0["state"]?.stringValue == "completed" }
        #expect(final["accepted"] == .int(8))
        #expect(w.received(collapse: collapse).values.allSatisfy { $0.count == 1 })
        try await w.stop()
    }
}
