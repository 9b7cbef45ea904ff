import Foundation
import PushProviderClient
import Synchronization
import Testing

/// ``RetryPolicy``: the waits it computes, and the two rules that matter most against a real server — a 429's
/// `Retry-After` is waited out in full (the 429 from a front server before the real one: ``ThrottlingFront``), and a
/// 400 is never sent twice.
@Suite(.timeLimit(.minutes(2))) struct RetryPolicyTests {
    typealias Backend = ServedPushctl.Backend

    @Test func waitsGrowExponentiallyWithJitterInTheUpperHalfUpToTheCap() {
        let low = RetryPolicy(initialDelay: 1, multiplier: 2, maxDelay: 8, random: { 0 })
        let high = RetryPolicy(initialDelay: 1, multiplier: 2, maxDelay: 8, random: { 0.999_999 })
        #expect((1...6).map { low.delay(afterAttempt: $0, retryAfter: nil) } == [0.5, 1, 2, 4, 4, 4])
        let upper = (1...6).map { high.delay(afterAttempt: $0, retryAfter: nil) }
        for (got, step) in zip(upper, [1.0, 2, 4, 8, 8, 8]) { #expect(got < step && got > step * 0.99, "\(upper)") }
        // Retry-After is a floor: never shortened by the backoff, never lengthened beyond it when larger.
        #expect(low.delay(afterAttempt: 1, retryAfter: 2) == 2)
        #expect(high.delay(afterAttempt: 5, retryAfter: 2) > 7.9)
        // Real jitter spreads a fleet: 200 draws of the third wait are not all equal and stay in [2, 4).
        let real = RetryPolicy(initialDelay: 1, multiplier: 2)
        let draws = (0..<200).map { _ in real.delay(afterAttempt: 3, retryAfter: nil) }
        #expect(draws.allSatisfy { $0 >= 2 && $0 < 4 } && Set(draws).count > 100)
    }

    @Test func onlyTimeoutsRateLimitsAndServerErrorsAreRetried() {
        for status in [408, 429, 500, 502, 503, 504] { #expect(RetryPolicy.isRetryable(status: status), "\(status)") }
        for status in [400, 401, 403, 404, 409, 413, 415, 422] { #expect(!RetryPolicy.isRetryable(status: status), "\(status)") }
    }

    @Test func retryAfterIsSecondsOrAnHTTPDate() {
        let now = Date(timeIntervalSince1970: 1_795_000_000)
        #expect(RetryPolicy.retryAfterSeconds("2", now: now) == 2)
        #expect(RetryPolicy.retryAfterSeconds(" 120 ", now: now) == 120)
        #expect(RetryPolicy.retryAfterSeconds(nil, now: now) == nil)
        #expect(RetryPolicy.retryAfterSeconds("soon", now: now) == nil)
        // 1_795_000_030 is Wed, 18 Nov 2026 11:07:10 GMT; a date in the past is no wait.
        #expect(RetryPolicy.retryAfterSeconds("Wed, 18 Nov 2026 11:07:10 GMT", now: now) == 30)
        #expect(RetryPolicy.retryAfterSeconds("Wed, 18 Nov 2026 11:05:10 GMT", now: now) == 0)
    }

    @Test(arguments: Backend.allCases)
    func a429WithRetryAfter2IsWaitedOutInFullThenSent(_ backend: Backend) async throws {
        // A 429 with Retry-After: 2 for the request after the first registration, from a front server that
        // forwards every other request to the real server (whose own limiter cannot promise a 429: its bucket
        // refills while a loaded machine is slow).
        let server = try await ServedPushctl.start(backend)
        defer { server.finish() }
        let state = InstallationTests.stateDirectory()
        defer { try? FileManager.default.removeItem(at: state) }
        try await ThrottlingFront.with(upstream: server.url) { front in
            let wire = ObservedTransport()
            let sleeper = RecordingSleeper(real: true)
            let app = try Installation(
                configuration: server.client(at: front.url), stateDirectory: state, facts: InstallationTests.facts,
                transport: wire, sleeper: sleeper)
            try await app.setDeviceToken(hex: InstallationTests.token(40))
            #expect(try await app.save() == .sent)

            front.refuseNext(retryAfter: "2")
            await app.subscribe("news")
            let clock = ContinuousClock()
            let started = clock.now
            #expect(try await app.save() == .sent)
            let elapsed = clock.now - started
            let statuses = wire.exchanges.dropFirst().map(\.status)
            #expect(statuses == [429, 200], "\(wire.exchanges.map { ($0.status, $0.retryAfter) })")
            #expect(wire.exchanges.dropFirst().first?.retryAfter == "2")
            #expect(sleeper.recorded.count == 1 && sleeper.recorded[0] >= 2, "\(sleeper.recorded)")
            #expect(elapsed >= .seconds(2), "\(elapsed)")
            // On the wire: the retry reached the server's side at least 2 s after the 429 left it (lower bounds
            // only: how much longer a loaded machine takes is not the client's doing).
            let arrivals = front.arrivals
            try #require(arrivals.map(\.status) == [201, 429, 200], "\(arrivals)")
            #expect(arrivals[2].received - arrivals[1].answered >= .seconds(2), "\(arrivals)")
            // The retry is the real server's success: the device now has the channel.
            #expect(try await server.device(InstallationTests.token(40)).json["channels"] as? [String] == ["news"])
        }
    }

    @Test func aRetryAfterLongerThanASaveWaitsIsKeptAndNoSaveSendsBeforeIt() async throws {
        // Retry-After: 2 from the front server, against a policy that waits at most 1 s inside a save.
        let server = try await ServedPushctl.start(.sqlite)
        defer { server.finish() }
        let state = InstallationTests.stateDirectory()
        defer { try? FileManager.default.removeItem(at: state) }
        try await ThrottlingFront.with(upstream: server.url) { front in
            let wire = ObservedTransport()
            let sleeper = RecordingSleeper()
            let clock = Mutex(Date(timeIntervalSince1970: 1_795_000_000))
            let app = try Installation(
                configuration: server.client(at: front.url), stateDirectory: state, facts: InstallationTests.facts,
                transport: wire, retry: RetryPolicy(maxRetryAfter: 1), sleeper: sleeper, now: { clock.withLock { $0 } })
            try await app.setDeviceToken(hex: InstallationTests.token(42))
            #expect(try await app.save() == .sent)
            front.refuseNext(retryAfter: "2")
            await app.subscribe("news")
            guard case .pending(let why) = try await app.save() else { Issue.record("sent through a 429"); return }
            #expect(why.code == "rate_limited" && why.status == 429, "\(why)")
            #expect(wire.exchanges.count == 2 && sleeper.recorded.isEmpty, "one 429, no wait inside the save")

            // A relaunch one second later (by the injected clock) sends nothing: the pause is on disk.
            clock.withLock { $0 += 1 }
            let relaunched = try Installation(
                configuration: server.client(at: front.url), stateDirectory: state, facts: InstallationTests.facts,
                transport: wire, sleeper: sleeper, now: { clock.withLock { $0 } })
            #expect(try await relaunched.save() == .pending(PushProviderClientError(
                code: "rate_limited", message: "the server asked for a pause until \(Date(timeIntervalSince1970: 1_795_000_002))")))
            #expect(wire.exchanges.count == 2)

            // Once it has passed on the clock, the change goes out (the front no longer refuses: the real server
            // answers).
            clock.withLock { $0 += 2 }
            #expect(try await relaunched.save() == .sent)
            #expect(wire.exchanges.map(\.status) == [201, 429, 200], "created, refused, then sent")
            #expect(front.arrivals.map(\.status) == [201, 429, 200])
            #expect(try await server.device(InstallationTests.token(42)).json["channels"] as? [String] == ["news"])
        }
    }

    @Test(arguments: Backend.allCases)
    func a400IsNotRetriedAndReachesTheCallerAsATypedError(_ backend: Backend) async throws {
        let server = try await ServedPushctl.start(backend)
        defer { server.finish() }
        let state = InstallationTests.stateDirectory()
        defer { try? FileManager.default.removeItem(at: state) }
        let wire = ObservedTransport()
        let sleeper = RecordingSleeper()
        let app = try Installation(
            configuration: server.client, stateDirectory: state, facts: InstallationTests.facts, transport: wire, sleeper: sleeper)
        try await app.setDeviceToken(hex: InstallationTests.token(41))
        await app.setTimeZone("Mars/Olympus_Mons")
        do {
            _ = try await app.save()
            Issue.record("a bad time zone was accepted")
        } catch let error as PushProviderClientError {
            #expect(error.status == 400 && error.code == "invalid_timeZone", "\(error)")
            #expect(!error.message.isEmpty)
        }
        #expect(wire.exchanges.map(\.status) == [400], "sent once, not retried")
        #expect(sleeper.recorded.isEmpty)
        #expect(try await server.device(InstallationTests.token(41)).status == 404, "nothing stored")

        // Fixed by the app, the same installation registers.
        await app.setTimeZone("Europe/Berlin")
        #expect(try await app.save() == .sent)
        #expect(try await server.device(InstallationTests.token(41)).json["timeZone"] as? String == "Europe/Berlin")
    }
}
