import Foundation
import PushProviderClient
import Testing
import TestSupport

/// ``Installation`` against a real `pushctl serve` over sockets, on SQLite and on PostgreSQL: what an app's calls
/// leave on the server, checked through the server's own API with a send key.
@Suite(.timeLimit(.minutes(2))) struct InstallationTests {
    typealias Backend = ServedPushctl.Backend

    /// A distinct test token, as hex (TestSupport's tokens, in a family of their own).
    static func token(_ i: Int) -> String { testToken(i, salt: 0x31).hex }

    /// A hex token's bytes: what APNs and ActivityKit hand the app.
    static func bytes(_ hex: String) -> Data {
        Data(stride(from: 0, to: hex.count, by: 2).map { i -> UInt8 in
            let start = hex.index(hex.startIndex, offsetBy: i)
            return UInt8(hex[start..<hex.index(start, offsetBy: 2)], radix: 16)!
        })
    }

    /// A fresh state directory for one "app install" (removed by the caller).
    static func stateDirectory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("pushctl-test-client-\(UUID().uuidString)")
    }

    /// The facts a test device reports (iOS's `de_DE` form of the locale: the server canonicalises it).
    static let facts = DeviceFacts(timeZone: "Asia/Tokyo", locale: "de_DE", appVersion: "2.10", osVersion: "17.2")

    /// What a save reports while the app has no device token yet (its Live Activity calls still go out).
    static let waitingForToken = SaveOutcome.pending(
        PushProviderClientError(code: "no_token", message: "the registration waits for a device token from APNs"))

    @Test(arguments: Backend.allCases)
    func firstRegistrationCarriesEveryInstallationFieldAndASecondSaveSendsNothing(_ backend: Backend) async throws {
        let server = try await ServedPushctl.start(backend)
        defer { server.finish() }
        let state = Self.stateDirectory()
        defer { try? FileManager.default.removeItem(at: state) }
        let wire = ObservedTransport()
        let app = try Installation(configuration: server.client, stateDirectory: state, facts: Self.facts, transport: wire)
        await app.setDeviceToken(Self.bytes(Self.token(1)))
        await app.setEnvironment(.development)
        await app.subscribe("news")
        await app.subscribe("sports")
        await app.setTags(["plan": "pro", "seats": 3, "beta": true])
        await app.login(user: "alice", userAuth: try await server.userAuth("alice"))

        #expect(try await app.save() == .sent)
        #expect(wire.exchanges.map(\.route) == ["POST /devices"])
        let body = wire.exchanges[0].body
        #expect(Set(body.keys) == ["token", "channels", "environment", "installation", "user", "userAuth", "timeZone", "locale",
                                   "appVersion", "osVersion", "tags"], "\(body)")
        #expect(wire.exchanges[0].request.headers["Authorization"] == "Bearer \(server.registrationKey)")

        let devices = try await server.devices(ofUser: "alice")
        try #require(devices.count == 1, "\(devices)")
        let d = devices[0]
        #expect(d["token"] as? String == Self.token(1))
        #expect(d["installation"] as? String == (await app.installationId))
        #expect(d["user"] as? String == "alice")
        #expect(d["timeZone"] as? String == "Asia/Tokyo")
        #expect(d["locale"] as? String == "de-DE")
        #expect(d["appVersion"] as? String == "2.10")
        #expect(d["osVersion"] as? String == "17.2")
        #expect(d["environment"] as? String == "development")
        #expect(d["channels"] as? [String] == ["news", "sports"])
        let tags = d["tags"] as? [String: Any] ?? [:]
        #expect(tags["plan"] as? String == "pro" && (tags["seats"] as? NSNumber)?.intValue == 3 && tags["beta"] as? Bool == true, "\(tags)")

        // Idempotent and cheap: nothing changed, nothing sent — in this process, and after a relaunch on the same
        // state, which keeps the installation id it made.
        #expect(try await app.save() == .upToDate)
        let relaunched = try Installation(configuration: server.client, stateDirectory: state, facts: Self.facts, transport: wire)
        #expect(await relaunched.installationId == (await app.installationId))
        #expect(try await relaunched.save() == .upToDate)
        #expect(wire.exchanges.count == 1)

        // One changed field is one request carrying that field alone.
        await relaunched.setAppVersion("2.11")
        #expect(try await relaunched.save() == .sent)
        #expect(wire.exchanges.count == 2)
        #expect(Set(wire.exchanges[1].body.keys) == ["token", "appVersion"], "\(wire.exchanges[1].body)")
        #expect(try await server.devices(ofUser: "alice").first?["appVersion"] as? String == "2.11")
    }

    @Test(arguments: Backend.allCases)
    func aTokenRotationReplacesTheOldTokenOnTheServerInOneRequest(_ backend: Backend) async throws {
        let server = try await ServedPushctl.start(backend)
        defer { server.finish() }
        let state = Self.stateDirectory()
        defer { try? FileManager.default.removeItem(at: state) }
        let wire = ObservedTransport()
        let app = try Installation(configuration: server.client, stateDirectory: state, facts: Self.facts, transport: wire)
        await app.setDeviceToken(Self.bytes(Self.token(1)))
        await app.subscribe("news")
        await app.login(user: "bob", userAuth: try await server.userAuth("bob"))
        #expect(try await app.save() == .sent)

        await app.setDeviceToken(Self.bytes(Self.token(2)))
        #expect(await app.acknowledged?.token == Self.token(1))
        #expect(try await app.save() == .sent)
        #expect(wire.exchanges.count == 2)
        #expect(wire.exchanges[1].status == 200)
        let body = wire.exchanges[1].body
        #expect(body["token"] as? String == Self.token(2))
        #expect(body["oldToken"] as? String == Self.token(1))
        #expect(Set(body.keys) == ["token", "oldToken"], "only the token changed: \(body)")
        #expect(await app.acknowledged?.token == Self.token(2))

        // The old token is gone; the new one has everything the old one had.
        #expect(try await server.device(Self.token(1)).status == 404)
        let (status, device) = try await server.device(Self.token(2))
        #expect(status == 200)
        #expect(device["channels"] as? [String] == ["news"])
        #expect(device["user"] as? String == "bob")
        #expect(device["installation"] as? String == (await app.installationId))
        #expect(try await server.devices(ofUser: "bob").map { $0["token"] as? String } == [Self.token(2)])
    }

    @Test(arguments: Backend.allCases)
    func loginAndLogoutMoveTheDeviceBetweenUsers(_ backend: Backend) async throws {
        let server = try await ServedPushctl.start(backend)
        defer { server.finish() }
        let state = Self.stateDirectory()
        defer { try? FileManager.default.removeItem(at: state) }
        let wire = ObservedTransport()
        let sleeper = RecordingSleeper()
        let app = try Installation(
            configuration: server.client, stateDirectory: state, facts: Self.facts, transport: wire, sleeper: sleeper)
        let token = Self.token(3)
        await app.setDeviceToken(Self.bytes(token))
        await app.login(user: "alice", userAuth: try await server.userAuth("alice"))
        #expect(try await app.save() == .sent)
        #expect(try await server.devices(ofUser: "alice").map { $0["token"] as? String } == [token])
        #expect(try await server.devices(ofUser: "carol").isEmpty)

        await app.login(user: "carol", userAuth: try await server.userAuth("carol"))
        #expect(try await app.save() == .sent)
        #expect(try await server.devices(ofUser: "alice").isEmpty)
        #expect(try await server.devices(ofUser: "carol").map { $0["token"] as? String } == [token])

        await app.logout()
        #expect(try await app.save() == .sent)
        let logout = try #require(wire.exchanges.last)
        #expect(logout.body["user"] is NSNull, "\(logout.body)")
        #expect(logout.body["userAuth"] == nil)
        #expect(try await server.devices(ofUser: "carol").isEmpty)
        let (status, device) = try await server.device(token)
        #expect(status == 200, "the device stays registered")
        #expect(device["user"] is NSNull)

        // A forged proof is the server's 403 forbidden_user, thrown to the app at once: never retried.
        let before = wire.exchanges.count
        await app.login(user: "alice", userAuth: String(repeating: "0", count: 64))
        await #expect(throws: PushProviderClientError.self) { try await app.save() }
        do { try await app.save() } catch let error as PushProviderClientError {
            #expect(error.code == "forbidden_user" && error.status == 403, "\(error)")
        }
        #expect(wire.exchanges.count == before + 2, "one request per save, no retries")
        #expect(sleeper.recorded.isEmpty)
        #expect(try await server.devices(ofUser: "alice").isEmpty)
    }

    @Test(arguments: Backend.allCases)
    func changesMadeWhileTheServerIsDownWaitOnDiskAndARelaunchSendsThemOnceCollapsed(_ backend: Backend) async throws {
        let server = try await ServedPushctl.start(backend)
        defer { server.finish() }
        let state = Self.stateDirectory()
        defer { try? FileManager.default.removeItem(at: state) }
        let retry = RetryPolicy(maxAttempts: 3, initialDelay: 1, random: { 0.5 })
        let sleeper = RecordingSleeper()
        let first = try Installation(
            configuration: server.client, stateDirectory: state, facts: Self.facts, retry: retry, sleeper: sleeper)
        await first.setDeviceToken(Self.bytes(Self.token(10)))
        await first.subscribe("news")
        #expect(try await first.save() == .sent)

        try await server.stop()
        // Three rotations and a channel change, each saved while the server is unreachable; and a Live Activity
        // push-to-start token rotated twice.
        for i in 11...13 {
            await first.setDeviceToken(Self.bytes(Self.token(i)))
            guard case .pending(let why) = try await first.save() else { Issue.record("saved while the server is down"); return }
            #expect(why.code == "unreachable", "\(why)")
        }
        await first.unsubscribe("news")
        await first.subscribe("sports")
        #expect(try await first.save() != .sent)
        #expect(try await first.registerPushToStartToken(Self.bytes(Self.token(20)), attributesType: "ScoreAttributes") != .sent)
        #expect(try await first.registerPushToStartToken(Self.bytes(Self.token(21)), attributesType: "ScoreAttributes") != .sent)
        #expect(await first.pendingLiveActivityChanges.count == 1, "the newer push-to-start token supersedes the older")
        // Backoff: 3 attempts per save, waits of 1 and 2 s (jitter pinned at the middle of the upper half).
        #expect(Array(sleeper.recorded.prefix(2)) == [0.75, 1.5], "\(sleeper.recorded)")
        #expect(await first.acknowledged?.token == Self.token(10))

        // The app is killed; the server comes back; the app is launched again on the same state directory.
        try await server.start()
        let wire = ObservedTransport()
        let relaunched = try Installation(
            configuration: server.client, stateDirectory: state, facts: Self.facts, transport: wire, retry: retry, sleeper: sleeper)
        #expect(try await relaunched.save() == .sent)
        #expect(wire.exchanges.map(\.route) == ["POST /devices", "POST /live-activities/push-to-start-tokens"])
        let body = wire.exchanges[0].body
        #expect(body["oldToken"] as? String == Self.token(10), "one replacement from the last acknowledged token")
        #expect(body["token"] as? String == Self.token(13))
        #expect(body["channels"] as? [String] == ["sports"])
        #expect(wire.exchanges[1].body["token"] as? String == Self.token(21))
        #expect(wire.exchanges[1].body["installation"] as? String == (await relaunched.installationId))

        for i in 10...12 { #expect(try await server.device(Self.token(i)).status == 404, "token \(i)") }
        let (status, device) = try await server.device(Self.token(13))
        #expect(status == 200)
        #expect(device["channels"] as? [String] == ["sports"])
        #expect(try await server.get("/v1/apps/example/devices/count").json["count"] as? Int == 1, "nothing duplicated")
        let listed = try await server.pushctl(["live-activity", "tokens", "list", "--app", "example", "--kind", "push-to-start", "--json"])
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(listed.stdout.split(separator: "\n").count == 1 && listed.stdout.contains(Self.token(21)), "\(listed.stdout)")

        // Sent once: a further save sends nothing.
        #expect(try await relaunched.save() == .upToDate)
        #expect(wire.exchanges.count == 2)
    }

    @Test(arguments: Backend.allCases)
    func liveActivityTokensRegisterUnderTheInstallationAndAnEndedActivityDropsItsUpdateToken(_ backend: Backend) async throws {
        let server = try await ServedPushctl.start(backend)
        defer { server.finish() }
        let state = Self.stateDirectory()
        defer { try? FileManager.default.removeItem(at: state) }
        let wire = ObservedTransport()
        let app = try Installation(
            configuration: server.client, stateDirectory: state, installationId: "inst-31", facts: Self.facts, transport: wire)
        #expect(try await app.registerPushToStartToken(Self.bytes(Self.token(30)), attributesType: "ScoreAttributes", channels: ["fans"]) == Self.waitingForToken)
        #expect(try await app.registerUpdateToken(Self.bytes(Self.token(31)), activityId: "act/1", attributesType: "ScoreAttributes") == Self.waitingForToken)
        let starts = try await server.pushctl(["live-activity", "tokens", "list", "--app", "example", "--kind", "push-to-start", "--json"])
        #expect(starts.stdout.contains(Self.token(30)) && starts.stdout.contains(#""installation":"inst-31""#), "\(starts.stdout)\(starts.stderr)")
        #expect(starts.stdout.contains(#""attributesType":"ScoreAttributes""#) && starts.stdout.contains(#""channels":["fans"]"#), "\(starts.stdout)")
        let updates = ["live-activity", "tokens", "list", "--app", "example", "--kind", "update", "--activity-id", "act/1"]
        var listed = try await server.pushctl(updates)
        #expect(listed.status == 0 && listed.stdout.contains(Self.token(31)), "\(listed.stdout)\(listed.stderr)")

        #expect(try await app.activityEnded(activityId: "act/1") == Self.waitingForToken)
        listed = try await server.pushctl(updates)
        #expect(listed.status == 0 && !listed.stdout.contains(Self.token(31)), "\(listed.stdout)\(listed.stderr)")
        // Ending it again: the server has nothing left for it (404), which is done, not an error.
        _ = try await app.activityEnded(activityId: "act/1")
        #expect(wire.exchanges.last?.status == 404)
        #expect(await app.pendingLiveActivityChanges.isEmpty)
        #expect(wire.exchanges.map(\.route).contains("DELETE /live-activities/activities/act%2F1"))
    }
}
