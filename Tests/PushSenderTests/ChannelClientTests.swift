import PushSimulator
import Foundation
import PushCore
import Testing
@testable import PushSender

/// `ChannelClient` against the real simulator over TLS: channel management, broadcasts, every channel
/// error, token mode, retries.
@Suite(.timeLimit(.minutes(1)))
struct ChannelClientTests {
    static let update = #"{"aps":{"event":"update","timestamp":1700000000,"content-state":{"score":"2-1"}}}"#

    /// A client for `sim` in certificate mode (the harness's client certificate for `com.example.app`).
    static func client(
        _ sim: SimulatorHarness, bundleId: String? = nil, sleeper: Sleeper = RecordingSleeper(),
        settings: ChannelClient.Settings = .init()
    ) throws -> ChannelClient {
        let target = sim.target()
        return ChannelClient(
            bundleId: bundleId ?? sim.topic, managementTarget: { _ in target }, broadcastTarget: { _ in target },
            credentials: FixedCertificate(tlsIdentity: try sim.clientIdentity()), settings: settings, sleeper: sleeper)
    }

    static func notification(
        _ payload: String = update, priority: PushPriority = .immediate, expiration: Int64? = nil, notificationId: String? = nil
    ) throws -> PreparedNotification {
        try PreparedNotification(
            raw: Array(payload.utf8),
            options: NotificationOptions(pushType: .liveactivity, priority: priority, expiration: expiration, notificationId: notificationId))
    }

    /// Runs `body` with a started harness, stopping it whatever happens.
    static func withSimulator<T>(
        clientAuth: SimulatorConfiguration.ClientAuth = .certificate, jwtKeys: [SimulatorJWTKey] = [],
        dev: DevCertificates? = nil, clock: @escaping @Sendable () -> Int64 = SimulatorClock.systemMilliseconds,
        _ body: (SimulatorHarness) async throws -> T
    ) async throws -> T {
        let sim = try await SimulatorHarness(clientAuth: clientAuth, jwtKeys: jwtKeys, dev: dev, clock: clock)
        do {
            let result = try await body(sim)
            await sim.stop()
            return result
        } catch {
            await sim.stop()
            throw error
        }
    }

    @Test func createsListsReadsAndDeletesChannels() async throws {
        try await Self.withSimulator { sim in
            let client = try Self.client(sim)
            let stored = try await client.create(policy: .mostRecent, environment: nil)
            let noStorage = try await client.create(policy: .noStorage, environment: .development)
            #expect(Data(base64Encoded: stored)?.count == 16)
            #expect(sim.simulator.channels(bundleId: sim.topic) == [
                SimulatorChannel(id: stored, policy: .mostRecent), SimulatorChannel(id: noStorage, policy: .noStorage),
            ])
            #expect(try await client.list(environment: nil) == [stored, noStorage])
            #expect(try await client.info(channelId: stored, environment: nil) == ChannelInfo(policy: .mostRecent, pushType: "LiveActivity"))
            #expect(try await client.info(channelId: noStorage, environment: nil) == ChannelInfo(policy: .noStorage, pushType: "LiveActivity"))
            try await client.delete(channelId: stored, environment: nil)
            #expect(try await client.list(environment: nil) == [noStorage])
            #expect(sim.simulator.counters.byStatus[201] == 2)
            #expect(sim.simulator.counters.byStatus[204] == 1)
        }
    }

    @Test func broadcastsReachTheChannelWithEveryHeader() async throws {
        try await Self.withSimulator { sim in
            let client = try Self.client(sim)
            let channel = try await client.create(policy: .mostRecent, environment: nil)
            let id = "123e4567-e89b-42d3-a456-426614174abc"
            let result = try await client.broadcast(
                channelId: channel, notification: try Self.notification(priority: .conserve, expiration: 1_900_000_000, notificationId: id),
                environment: nil)
            #expect(result.status == 200)
            #expect(result.requestId == id)
            #expect(NotificationID.isValid(result.uniqueId ?? ""))
            // Without an apns-id a request id is made up; the simulator answers with it.
            let second = try await client.broadcast(channelId: channel, notification: try Self.notification(), environment: nil)
            #expect(NotificationID.isValid(second.requestId))

            let received = sim.simulator.received
            #expect(received.count == 2)
            let first = try #require(received.first)
            #expect(first.channelId == channel)
            #expect(first.request.topic == sim.topic)
            #expect(first.request.pushType == .liveactivity)
            #expect(first.request.priority == .conserve)
            #expect(first.request.expiration == 1_900_000_000)
            #expect(first.request.notificationId == id)
            #expect(first.uniqueId == result.uniqueId)
            #expect(try JSONValue(parsing: first.request.payload) == JSONValue(parsing: Array(Self.update.utf8)))
            #expect(received.last?.request.notificationId == second.requestId)
            #expect(received.last?.request.expiration == nil)
            #expect(received.last?.request.priority == .immediate)
        }
    }

    @Test func everyChannelRejectionBecomesAClearError() async throws {
        try await Self.withSimulator { sim in
            sim.simulator.addChannels([SimulatorChannel(id: "AAAAAAAAAAAAAAAAAAAAAA==", policy: .noStorage)], bundleId: sim.topic)
            let sleeper = RecordingSleeper()
            let client = try Self.client(sim, sleeper: sleeper)
            let unknown = Data(repeating: 9, count: 16).base64EncodedString()
            func expectRejected(
                _ reason: APNsReason, _ meaning: String, status: Int = 400, sourceLocation: SourceLocation = #_sourceLocation,
                _ call: () async throws -> Void
            ) async {
                do {
                    try await call()
                    Issue.record("\(reason) expected, the call succeeded", sourceLocation: sourceLocation)
                } catch let error as ChannelError {
                    #expect(error.code == .rejected(status: status, reason: reason), sourceLocation: sourceLocation)
                    #expect(error.message.hasPrefix("APNs refused: \(reason.rawValue) ("), sourceLocation: sourceLocation)
                    #expect(error.message.contains(meaning), "\(error.message)", sourceLocation: sourceLocation)
                    #expect(NotificationID.isValid(error.requestId ?? ""), sourceLocation: sourceLocation)
                } catch {
                    Issue.record("not a ChannelError: \(error)", sourceLocation: sourceLocation)
                }
            }
            await expectRejected(.channelNotRegistered, "does not exist in this environment") {
                _ = try await client.info(channelId: unknown, environment: nil)
            }
            await expectRejected(.channelNotRegistered, "does not exist") { try await client.delete(channelId: unknown, environment: nil) }
            await expectRejected(.channelNotRegistered, "does not exist") {
                _ = try await client.broadcast(channelId: unknown, notification: try Self.notification(), environment: nil)
            }
            await expectRejected(.missingChannelId, "no apns-channel-id") { try await client.delete(channelId: "", environment: nil) }
            await expectRejected(.badChannelId, "malformed") { _ = try await client.info(channelId: "not base64", environment: nil) }
            await expectRejected(.badExpirationDate, "no-storage channel") {
                _ = try await client.broadcast(
                    channelId: "AAAAAAAAAAAAAAAAAAAAAA==", notification: try Self.notification(expiration: 1_900_000_000), environment: nil)
            }
            await expectRejected(.unknown("BadPayload"), "Live Activity payload") {
                _ = try await client.broadcast(
                    channelId: "AAAAAAAAAAAAAAAAAAAAAA==", notification: try Self.notification(#"{"aps":{"event":"update"}}"#), environment: nil)
            }
            var alert = try Self.notification()
            alert.pushType = .alert
            await expectRejected(.invalidPushType, "Live Activity pushes only") {
                _ = try await client.broadcast(channelId: "AAAAAAAAAAAAAAAAAAAAAA==", notification: alert, environment: nil)
            }
            var low = try Self.notification()
            low.priority = .low
            await expectRejected(.badPriority, "5 or 10") {
                _ = try await client.broadcast(channelId: "AAAAAAAAAAAAAAAAAAAAAA==", notification: low, environment: nil)
            }
            var huge = try Self.notification()
            huge.payload = Array((#"{"aps":{"event":"update","timestamp":1,"content-state":{"x":""# + String(repeating: "x", count: 4100) + #""}}}"#).utf8)
            await expectRejected(.payloadTooLarge, "4096", status: 413) {
                _ = try await client.broadcast(channelId: "AAAAAAAAAAAAAAAAAAAAAA==", notification: huge, environment: nil)
            }
            // Another bundle id: the certificate does not cover it.
            let stranger = try Self.client(sim, bundleId: "com.example.other", sleeper: sleeper)
            await expectRejected(.topicDisallowed, "may not manage") { _ = try await stranger.list(environment: nil) }
            // Rejections are never retried.
            #expect(sleeper.delays.isEmpty)
        }
    }

    @Test func channelLimitAndMissingCapabilityAreClearErrors() async throws {
        let pki = try SimulatorPKI()
        let dir = NSTemporaryDirectory() + "channel-limit-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try pki.ca.certificatePEM.write(toFile: dir + "/ca.pem", atomically: true, encoding: .utf8)
        let simulator = try PushSimulator(
            configuration: SimulatorConfiguration(
                caPEM: pki.ca.certificatePEM, serverCertificatePEM: pki.server.certificatePEM, serverKeyPEM: pki.server.keyPEM,
                clientAuth: .none, maxChannelsPerBundleId: 1, broadcastDisabledBundleIds: ["com.example.off"]))
        let port = try await simulator.start()
        defer { Task { try? await simulator.stop() } }
        let target = SenderTarget(host: "127.0.0.1", port: port, caFile: dir + "/ca.pem")
        func client(_ bundle: String) -> ChannelClient {
            ChannelClient(
                bundleId: bundle, managementTarget: { _ in target }, broadcastTarget: { _ in target },
                credentials: FixedCertificate(tlsIdentity: nil), sleeper: RecordingSleeper())
        }
        let app = client("com.example.app")
        _ = try await app.create(policy: .noStorage, environment: nil)
        do throws(ChannelError) {
            _ = try await app.create(policy: .noStorage, environment: nil)
            Issue.record("CannotCreateChannelConfig expected")
        } catch {
            #expect(error.code == .rejected(status: 400, reason: .cannotCreateChannelConfig))
            #expect(error.message.contains("channel limit"))
        }
        do throws(ChannelError) {
            _ = try await client("com.example.off").create(policy: .mostRecent, environment: nil)
            Issue.record("FeatureNotEnabled expected")
        } catch {
            #expect(error.reason == .featureNotEnabled)
            #expect(error.message == "APNs refused: FeatureNotEnabled (the broadcast capability is not enabled for this bundle id)")
        }
        try await simulator.stop()
    }

    /// A `create` first answered `status` (the simulator's `fault` at 1) succeeds once APNs recovers, which it does
    /// while the client waits out its first backoff: one retry.
    static func expectRetriedOnce(after fault: WritableKeyPath<SimulatorFaults, Double> & Sendable, answers status: Int) async throws {
        try await withSimulator { sim in
            sim.simulator.faults[keyPath: fault] = 1
            let sleeper = RecordingSleeper(onSleep: { _ in sim.simulator.faults[keyPath: fault] = 0 })
            let client = try Self.client(sim, sleeper: sleeper)
            let id = try await client.create(policy: .mostRecent, environment: nil)
            #expect(sim.simulator.channels(bundleId: sim.topic).map(\.id) == [id])
            #expect(sleeper.delays.count == 1)
            #expect(sim.simulator.counters.byStatus[status] == 1)
            #expect(sim.simulator.counters.byStatus[201] == 1)
        }
    }

    @Test func transient503IsRetriedWithBackoff() async throws {
        try await Self.expectRetriedOnce(after: \.serviceUnavailableFraction, answers: 503)
    }

    /// The channel client retries on the statuses every APNs answer is retried on (`APNsAnswerRule`, 429 and 5xx):
    /// before, its own list (429, 500, 503) made a front end's 502 a final rejection.
    @Test func aBadGatewayFromAFrontEndIsRetriedAsEvery5xx() async throws {
        try await Self.expectRetriedOnce(after: \.badGatewayFraction, answers: 502)
    }

    @Test func aLasting503GivesUpAfterTheAttempts() async throws {
        try await Self.withSimulator { sim in
            sim.simulator.faults.serviceUnavailableFraction = 1
            let sleeper = RecordingSleeper()
            let client = try Self.client(sim, sleeper: sleeper, settings: ChannelClient.Settings(maxAttempts: 3))
            do throws(ChannelError) {
                _ = try await client.list(environment: nil)
                Issue.record("ServiceUnavailable expected")
            } catch {
                #expect(error.code == .rejected(status: 503, reason: .serviceUnavailable))
                #expect(error.message.contains("retried"))
            }
            #expect(sleeper.delays.count == 2)
            #expect(sim.simulator.counters.byStatus[503] == 3)
        }
    }

    @Test func anUnreachableEndpointIsRetriedThenReported() async throws {
        // A port nothing listens on: connection refused, never sent.
        let sim = try await SimulatorHarness()
        let port = sim.port
        await sim.stop()
        let target = SenderTarget(host: "127.0.0.1", port: port, caFile: nil)
        let sleeper = RecordingSleeper()
        let client = ChannelClient(
            bundleId: "com.example.app", managementTarget: { _ in target }, broadcastTarget: { _ in target },
            credentials: FixedCertificate(tlsIdentity: nil), settings: ChannelClient.Settings(maxAttempts: 2), sleeper: sleeper)
        do throws(ChannelError) {
            _ = try await client.create(policy: .noStorage, environment: nil)
            Issue.record("unreachable expected")
        } catch {
            #expect(error.code == .unreachable)
            #expect(error.message.contains("unreachable"))
        }
        #expect(sleeper.delays.count == 1)
    }

    @Test func tokenModeThroughTheAppConfiguration() async throws {
        let dev = try CredentialFixture.make(label: "channels-p8")
        let key = SimulatorJWTKey(
            keyId: DevCertificates.keyId, teamId: DevCertificates.teamId,
            publicKeyPEM: try String(contentsOfFile: dev.path("AuthKey_DEVKEY1234.pub.pem"), encoding: .utf8))
        try await Self.withSimulator(clientAuth: .token, jwtKeys: [key], dev: dev) { sim in
            // As pushctl builds it: endpoint URL, CA file, .p8; channels and broadcasts follow the endpoint.
            let app = AppSettings(
                topic: sim.topic, endpoint: .url(host: "127.0.0.1", port: sim.port), caFile: sim.caFile,
                auth: .token(p8: dev.path("AuthKey_DEVKEY1234.p8"), keyId: DevCertificates.keyId, teamId: DevCertificates.teamId))
            let configuration = PushConfiguration(
                database: "unused.sqlite", simulator: SimulatorSettings(certificates: dev.path(".")), apps: ["a": app])
            let client = try ChannelClient.forApp(app, in: configuration)
            let channel = try await client.create(policy: .mostRecent, environment: nil)
            let result = try await client.broadcast(channelId: channel, notification: try Self.notification(), environment: nil)
            #expect(result.status == 200)
            #expect(try await client.list(environment: nil) == [channel])
            #expect(sim.simulator.received.first?.channelId == channel)
        }
    }

    @Test func tokenModeRefreshesAnExpiredProviderTokenOnce() async throws {
        let dev = try CredentialFixture.make(label: "channels-p8-expiry")
        // The simulator's clock runs ahead of ours: it calls a 25-minute-old token (61 minutes by its clock)
        // expired, so only the 403 ExpiredProviderToken answer makes the client refresh it.
        let apns = OffsetClock(), ours = OffsetClock()
        let key = SimulatorJWTKey(
            keyId: DevCertificates.keyId, teamId: DevCertificates.teamId,
            publicKeyPEM: try String(contentsOfFile: dev.path("AuthKey_DEVKEY1234.pub.pem"), encoding: .utf8))
        try await Self.withSimulator(clientAuth: .token, jwtKeys: [key], dev: dev, clock: { apns.nowMs() }) { sim in
            let credentials = try TokenCredentials(
                p8Path: dev.path("AuthKey_DEVKEY1234.p8"), keyId: DevCertificates.keyId, teamId: DevCertificates.teamId,
                now: { ours.now() })
            let target = sim.target()
            let sleeper = RecordingSleeper()
            let client = ChannelClient(
                bundleId: sim.topic, managementTarget: { _ in target }, broadcastTarget: { _ in target },
                credentials: credentials, sleeper: sleeper)
            let channel = try await client.create(policy: .mostRecent, environment: nil)
            ours.advance(seconds: 25 * 60)
            apns.advance(seconds: 61 * 60)
            let result = try await client.broadcast(channelId: channel, notification: try Self.notification(), environment: nil)
            #expect(result.status == 200)
            #expect(credentials.tokensGenerated == 2)
            #expect(sim.simulator.counters.byReason["ExpiredProviderToken"] == 1)
            #expect(sleeper.delays.isEmpty)
        }
    }

    @Test func targetsFollowTheConfiguredEndpoints() {
        let sim = SimulatorSettings(host: "0.0.0.0", port: 2197, certificates: "/certs")
        #expect(SenderTarget.channelManagement(.production, environment: .production, caFile: nil, simulator: sim) == .appleChannelsProduction)
        #expect(SenderTarget.channelManagement(.production, environment: .development, caFile: nil, simulator: sim) == .appleChannelsDevelopment)
        #expect(SenderTarget.channelManagement(.development, environment: .production, caFile: nil, simulator: sim).port == 2196)
        #expect(SenderTarget.channelManagement(.simulator, environment: .production, caFile: nil, simulator: sim)
            == SenderTarget(host: "127.0.0.1", port: 2197, caFile: "/certs/ca.pem"))
        #expect(SenderTarget.channelManagement(.url(host: "m.internal", port: 8443), environment: .development, caFile: "/ca", simulator: sim)
            == SenderTarget(host: "m.internal", port: 8443, caFile: "/ca"))
        #expect(SenderTarget.broadcast(.development, environment: .production, caFile: nil, simulator: sim) == .appleProduction)
        #expect(SenderTarget.broadcast(.production, environment: .development, caFile: nil, simulator: sim) == .appleDevelopment)
        #expect(SenderTarget.broadcast(.simulator, environment: .production, caFile: nil, simulator: sim).port == 2197)
    }
}
