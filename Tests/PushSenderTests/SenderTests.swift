import PushSimulator
import Foundation
import PushCore
import Testing
import func TestSupport.waitUntil
@testable import PushSender

/// The sender against the real PushSimulator over real TLS and HTTP/2 (no mocked transport).
/// Serialized: several tests push thousands of streams; running them one at a time keeps the load (and
/// other suites' timing) sane on a 2-core CI box.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct SenderTests {
    static let fast = SenderConfiguration(requestTimeoutMs: 10_000, maxAttempts: 4)

    private func makeSender(
        _ sim: SimulatorHarness, configuration: SenderConfiguration = fast, sleeper: Sleeper = RecordingSleeper(),
        target: SenderTarget? = nil, identity: TLSIdentity? = nil
    ) throws -> APNsSender {
        try APNsSender(
            target: target ?? sim.target(), credentials: FixedCertificate(tlsIdentity: identity ?? sim.clientIdentity()),
            configuration: configuration, sleeper: sleeper, random: { 0.5 })
    }

    @Test func mutualTLSAcceptsAndRecordsApnsId() async throws {
        let sim = try await SimulatorHarness()
        let sender = try makeSender(sim)
        let request = sim.request(testToken(1))
        let result = await sender.send(request)
        await sender.shutdown()
        await sim.stop()
        #expect(result.kind == .accepted)
        #expect(result.status == 200)
        #expect(result.notificationId == request.notificationId)
        #expect(result.attempts == 1)
        #expect(sim.simulator.received.map(\.request.notificationId) == [request.notificationId])
    }

    /// A handle writes each request's URL and apns-id into lines of its own, reused from request to request: a token
    /// of every accepted length reaches its own path, a short one after a long one included (a line that grew, or
    /// kept the end of the longer token, would send another token or a malformed one: BadDeviceToken).
    @Test func tokensOfEveryAcceptedLengthReachTheirPathThroughOneHandle() async throws {
        let sim = try await SimulatorHarness()
        var configuration = Self.fast
        configuration.window = 1
        let sender = try makeSender(sim, configuration: configuration)
        let tokens = try [8, 100, 32, 8, 64].enumerated().map { i, count in
            try DeviceToken(bytes: (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ i) })
        }
        var results: [DeliveryResult] = []
        for token in tokens { results.append(await sender.send(sim.request(token))) }
        await sender.shutdown()
        await sim.stop()
        #expect(results.map(\.kind) == Array(repeating: .accepted, count: tokens.count))
        #expect(sim.simulator.received.map(\.request.token) == tokens)
        #expect(sim.simulator.received.map(\.request.notificationId) == results.map(\.notificationId))
    }

    @Test func fourConnectionsEachCarryNotificationsAndWidenTheWindow() async throws {
        let sim = try await SimulatorHarness(faults: SimulatorFaults(responseDelay: .milliseconds(20)))
        var configuration = Self.fast
        configuration.connections = 4
        configuration.window = 50
        #expect(configuration.inFlightLimit == 200)
        let sender = try makeSender(sim, configuration: configuration)
        let box = ResultBox()
        let requests = (0..<400).map { sim.request(testToken($0)) }
        await sender.run(requests: requests) { box.add($0) }
        await sender.shutdown()
        await sim.stop()
        #expect(box.results.count == 400)
        #expect(box.results.allSatisfy { $0.kind == .accepted && $0.attempts == 1 })
        #expect(Set(sim.simulator.received.map(\.request.notificationId)) == Set(requests.map(\.notificationId)))
        // Connections open lazily, with a transport's first request: four means every transport sent.
        #expect(sim.simulator.counters.connections == 4)
    }

    @Test func applyingAnAppsConnectionsOverridesTheDefault() {
        let app = AppSettings(
            topic: "t", endpoint: .development, auth: .token(p8: "k.p8", keyId: "K", teamId: "T"), window: 100, connections: 3)
        let applied = SenderConfiguration().applying(app)
        #expect(applied.connections == 3)
        #expect(applied.inFlightLimit == 300)
        #expect(SenderConfiguration().inFlightLimit == 500)
    }

    @Test func anAppWithUnifiedPushAndNoWindowGetsTheWiderWindowAndAnAppsOwnWindowWins() throws {
        var app = AppSettings(webPush: nil)
        app.unifiedPush = try UnifiedPushSettings(vapidKey: "v.pem", subject: "mailto:ops@example.com")
        #expect(SenderConfiguration().applying(app).inFlightLimit == SenderConfiguration.unifiedPushWindow)
        app.window = 300
        #expect(SenderConfiguration().applying(app).inFlightLimit == 300)
        app.unifiedPush = nil
        app.window = nil
        #expect(SenderConfiguration().applying(app).inFlightLimit == 500)
    }

    @Test func untrustedServerFailsClosedAsACredentialStop() async throws {
        let sim = try await SimulatorHarness()
        let other = try await SimulatorHarness()
        let sender = try makeSender(sim, target: sim.target(caFile: other.caFile))
        let results = ResultBox()
        await sender.run(requests: (0..<5).map { sim.request(testToken($0)) }) { results.add($0) }
        let summary = sender.summary
        await sender.shutdown()
        await sim.stop()
        await other.stop()
        #expect(results.results.count == 5)
        // Not a device's fault: nothing is final, the endpoint stops and the stop names TLS.
        #expect(results.results.allSatisfy { $0.kind == .unsent && $0.status == 0 && $0.stop?.kind == .credentials })
        #expect(results.results.allSatisfy { $0.stop?.message.contains("TLS") == true })
        // …and names the real cause: the server's certificate does not verify against the trust anchor (the
        // other dev CA has the same name, so OpenSSL finds it and libcurl quotes a step of the failed signature
        // check, "asn1 encoding routines::EVP lib", which alone does not say what is wrong).
        let message = results.results.first?.stop?.message ?? ""
        #expect(message.contains("the server's certificate does not verify"), "\(message)")
        #expect(summary.stops.count == 1)
        #expect(sim.simulator.counters.requests == 0)
    }

    @Test func hostnameMismatchFailsClosed() async throws {
        let sim = try await SimulatorHarness()
        let sender = try makeSender(sim, target: sim.target(host: "wrong-name.example", address: "127.0.0.1"))
        let result = await sender.send(sim.request(testToken(1)))
        await sender.shutdown()
        await sim.stop()
        #expect(result.kind == .unsent)
        #expect(result.stop?.kind == .credentials)
        #expect(sim.simulator.counters.requests == 0)
    }

    @Test func expiredCertificateIsRefusedBeforeConnecting() throws {
        let notAfter: Int64 = 1_700_000_000_000  // 2023-11-14T22:13:20Z
        #expect {
            try APNsSender(
                target: SenderTarget(host: "127.0.0.1", port: 9), credentials: FixedCertificate(tlsIdentity: nil),
                certificateNotAfterMs: notAfter)
        } throws: { error in
            guard let e = error as? SenderError else { return false }
            return e.code == .certificateExpired && e.message.contains("2023-11-14")
        }
    }

    @Test func outcomeClassesAndPruneDecisions() async throws {
        let dead = testToken(2), bad = testToken(3), wrongTopic = testToken(4), ok = testToken(1)
        let sim = try await SimulatorHarness(devices: [
            dead: .unregistered(timestampMs: 1_700_000_000_000), bad: .bad, wrongTopic: .topic("com.other.app"),
        ])
        let sender = try makeSender(sim)
        let accepted = await sender.send(sim.request(ok))
        let unregistered = await sender.send(sim.request(dead))
        let badToken = await sender.send(sim.request(bad))
        let notForTopic = await sender.send(sim.request(wrongTopic))
        var big = sim.request(ok)
        big.payload = Array(("{\"aps\":{\"alert\":\"" + String(repeating: "x", count: 5000) + "\"}}").utf8)
        let tooLarge = await sender.send(big)
        await sender.shutdown()
        await sim.stop()
        #expect(accepted.kind == .accepted)
        #expect(unregistered.kind == .tokenDead && unregistered.status == 410 && unregistered.reason == .unregistered)
        #expect(unregistered.apnsTimestampMs == 1_700_000_000_000)
        #expect(unregistered.prune == .delete(PruneRequest(reason: .unregistered, apnsTimestampMs: 1_700_000_000_000)))
        // BadDeviceToken on an endpoint that has not yet proven healthy (5 answers < 100): held, not deleted.
        #expect(badToken.kind == .tokenDead && badToken.reason == .badDeviceToken && badToken.prune == .held)
        #expect(notForTopic.kind == .tokenDead && notForTopic.prune == .delete(PruneRequest(reason: .deviceTokenNotForTopic)))
        #expect(tooLarge.kind == .rejected && tooLarge.status == 413 && tooLarge.attempts == 1 && tooLarge.prune == .none)
        #expect(accepted.prune == .none)
        // The sender decides; only the store prunes.
        #expect([accepted, unregistered, badToken, notForTopic, tooLarge].allSatisfy { !$0.pruned })
    }

    @Test func tooManyRequestsRetriesWithBackoffThenDefers() async throws {
        let token = testToken(9)
        let sim = try await SimulatorHarness(devices: [token: .tooManyRequests])
        let sleeper = RecordingSleeper()
        let sender = try makeSender(sim, sleeper: sleeper)
        let request = sim.request(token)
        let result = await sender.send(request)
        await sender.shutdown()
        await sim.stop()
        #expect(result.kind == .deferred && result.status == 429 && result.attempts == 4)
        // Full jitter with random 0.5: half of min(cap, 1 s · 2^(n-1)).
        #expect(sleeper.delays == [500, 1000, 2000])
        #expect(sim.simulator.counters.requests == 4)
        #expect(sim.simulator.counters.byStatus[429] == 4)
    }

    @Test func serviceUnavailableIsRetriedUntilAccepted() async throws {
        let sim = try await SimulatorHarness(faults: SimulatorFaults(serviceUnavailableFraction: 1))
        let simulator = sim.simulator
        // Two 503s, then the server heals while the sender backs off: the same apns-id must get through.
        let sleeper = RecordingSleeper { call in if call == 2 { simulator.faults = SimulatorFaults() } }
        let sender = try makeSender(sim, sleeper: sleeper)
        let request = sim.request(testToken(5))
        let result = await sender.send(request)
        await sender.shutdown()
        await sim.stop()
        #expect(result.kind == .accepted)
        #expect(result.attempts == 3)
        #expect(sleeper.delays == [500, 1000])
        #expect(simulator.counters.byStatus[503] == 2)
        #expect(simulator.received.map(\.request.notificationId) == [request.notificationId])
    }

    @Test func goAwayAfter500Of2000StreamsLosesNothing() async throws {
        let sim = try await SimulatorHarness(faults: SimulatorFaults(goAwayAfterStreams: 500))
        let sender = try makeSender(sim)
        let box = ResultBox()
        let requests = (0..<2000).map { sim.request(testToken($0)) }
        await sender.run(requests: requests) { box.add($0) }
        await sender.shutdown()
        await sim.stop()
        let results = box.results
        #expect(results.count == 2000)
        #expect(Set(results.map(\.notificationId)) == Set(requests.map(\.notificationId)))
        let failures = results.filter { $0.kind != .accepted }
        #expect(failures.isEmpty, "\(failures.count) not accepted: \(Set(failures.map { "\($0.kind) \($0.status) \($0.reason?.rawValue ?? "") \($0.error ?? "")" }).prefix(3))")
        #expect(Set(sim.simulator.received.map(\.request.notificationId)).isSuperset(of: requests.map(\.notificationId)))
        #expect(sim.simulator.counters.goAways >= 1)
        // Streams above the GOAWAY's last-stream-id were never processed: resent, not flagged, not counted.
        let resent = results.filter { $0.possiblyDuplicated || $0.attempts != 1 }
        let why = "\(resent.count) resent: \(resent.prefix(3).map { "attempts \($0.attempts) possiblyDuplicated \($0.possiblyDuplicated)" }); simulator: \(sim.simulator.counters.requests) requests, \(sim.simulator.counters.goAways) GOAWAYs; libcurl \(LinkedLibraries.curl)"
        if LinkedLibraries.curl.hasPrefix("7.") {
            // libcurl 7.88's own resend of a refused stream can stall on the new connection: HEADERS go out, the body
            // never does, and the request times out unanswered (docs/sending.md, "libcurl versions"). The sender then
            // resends it flagged possibly duplicated, as it must for a timeout, without using an attempt; APNs never
            // saw its body, so nothing is processed twice (the count below).
            #expect(resent.allSatisfy { $0.possiblyDuplicated && $0.attempts == 1 }, "\(why)")
        } else {
            #expect(resent.isEmpty, "\(why)")
        }
        #expect(sim.simulator.counters.requests == 2000)
    }

    @Test func streamLimitDropWithRefusedStreamLosesNothing() async throws {
        let bad = testToken(100_000)
        let sim = try await SimulatorHarness(
            faults: SimulatorFaults(dropStreamLimitAfterRejection: true), devices: [bad: .bad])
        let sender = try makeSender(sim)
        let box = ResultBox()
        var requests = (0..<1000).map { sim.request(testToken($0)) }
        requests.insert(sim.request(bad), at: 10)
        await sender.run(requests: requests) { box.add($0) }
        await sender.shutdown()
        await sim.stop()
        let results = box.results
        #expect(results.count == 1001)
        let failures = results.filter { $0.kind != .accepted && $0.token != bad }
        #expect(failures.isEmpty, "\(failures.count) not accepted: \(Set(failures.map { "\($0.kind) \($0.status) \($0.reason?.rawValue ?? "") \($0.error ?? "")" }).prefix(3))")
        #expect(Set(results.map(\.notificationId)).count == 1001)
    }

    @Test func connectionResetWithHundredInFlightLosesNothing() async throws {
        // The connection is reset when stream 101 opens, with 100 requests in flight (answers are delayed).
        let sim = try await SimulatorHarness(
            faults: SimulatorFaults(resetAfterRequests: 100, responseDelay: .milliseconds(200)))
        let simulator = sim.simulator
        // Heal once the first reset happened (a server that resets every connection would defer everything).
        let healer = Task {
            guard (try? await waitUntil(deadline: .seconds(60), every: .milliseconds(5), "the first reset") {
                simulator.counters.resets > 0
            }) != nil else { return }
            simulator.faults = SimulatorFaults()
        }
        let sender = try makeSender(sim)
        let box = ResultBox()
        let requests = (0..<300).map { sim.request(testToken($0)) }
        await sender.run(requests: requests) { box.add($0) }
        await sender.shutdown()
        healer.cancel()
        await sim.stop()
        let results = box.results
        #expect(results.count == 300)
        let failures = results.filter { $0.kind != .accepted }
        #expect(failures.isEmpty, "\(failures.count) not accepted: \(Set(failures.map { "\($0.kind) \($0.status) \($0.reason?.rawValue ?? "") \($0.error ?? "")" }).prefix(3))")
        #expect(Set(results.map(\.notificationId)).count == 300)
        // Requests lost with the connection were sent (their body left): flagged, resent without using an attempt.
        #expect(results.contains { $0.possiblyDuplicated })
        #expect(results.allSatisfy { $0.attempts == 1 })
        #expect(simulator.counters.resets >= 1)
        #expect(Set(simulator.received.map(\.request.notificationId)).isSuperset(of: requests.map(\.notificationId)))
    }

    @Test func slowServerHitsRequestTimeoutsThenDefersWithoutHanging() async throws {
        let sim = try await SimulatorHarness(faults: SimulatorFaults(responseDelay: .seconds(20)))
        let config = SenderConfiguration(requestTimeoutMs: 300, maxAttempts: 2, maxDroppedAttempts: 3)
        let sender = try makeSender(sim, configuration: config)
        let started = Date()
        let result = await sender.send(sim.request(testToken(1)))
        await sender.shutdown()
        await sim.stop()
        // A timed-out request is not an answer: it does not use an attempt, and after 3 the device is deferred.
        #expect(result.kind == .deferred)
        #expect(result.attempts == 0)
        #expect(sim.simulator.counters.requests == 3)
        #expect(result.possiblyDuplicated)
        #expect(result.error?.isEmpty == false)
        #expect(Date().timeIntervalSince(started) < 15)
    }

    @Test func aRequestLostOnTheWireWhileTheRunStopsComesBackUnsentAndIsNotWrittenAgain() async throws {
        // A worker cut off from the network gets SIGTERM: its requests on the wire time out. Written again, they
        // could reach APNs after the process has gone (the kernel delivers them when the link comes back) and
        // after another worker took the shard over: while stopping, a lost request is not resent.
        let sim = try await SimulatorHarness(faults: SimulatorFaults(responseDelay: .seconds(20)))
        let config = SenderConfiguration(requestTimeoutMs: 500, maxAttempts: 2, maxDroppedAttempts: 3)
        let sender = try makeSender(sim, configuration: config)
        // The stop comes once the request is on the wire (a job not yet sent when the run stops — one the new
        // connection's gate holds — comes back unsent without being written at all).
        let sending = Task { await sender.send(sim.request(testToken(1))) }
        try await waitUntil(deadline: .seconds(10), every: .milliseconds(5), "the request reached the simulator") {
            sim.simulator.counters.requests == 1
        }
        sender.abandonWaiting("the run is stopping")
        let result = await sending.value
        await sender.shutdown()
        await sim.stop()
        #expect(result.kind == .unsent)
        #expect(result.possiblyDuplicated)
        #expect(result.stop?.kind == .stopping)
        #expect(sim.simulator.counters.requests == 1)
    }

    @Test func breakerTripsOnMassBadDeviceToken() async throws {
        var devices: [DeviceToken: DeviceBehaviour] = [:]
        for i in 0..<150 { devices[testToken(i)] = .otherEnvironment }
        let sim = try await SimulatorHarness(devices: devices)
        let sender = try makeSender(sim)
        let box = ResultBox()
        await sender.run(requests: (0..<150).map { sim.request(testToken($0)) }) { box.add($0) }
        let summary = sender.summary
        await sender.shutdown()
        await sim.stop()
        #expect(box.results.count == 150)
        #expect(box.results.allSatisfy { $0.reason == .badDeviceToken })
        #expect(summary.breakerTripped.count == 1)
        #expect(!summary.allAccepted)
        // Nothing is deleted: the first 49 were held (and are discarded at the trip), the rest kept.
        #expect(box.results.allSatisfy { $0.prune == .held || $0.prune == .keptByBreaker })
        #expect(box.results.filter { $0.prune == .keptByBreaker }.count == 101)
        #expect(sender.trippedEndpoints.count == 1)
    }
}
