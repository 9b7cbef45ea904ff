import PushSimulator
import Foundation
import PushCore
import Testing
@testable import PushSender

/// The sender with the credentials users actually have (.p12 from make-dev, modern and legacy; .p8),
/// against the real simulator over TLS.
@Suite(.timeLimit(.minutes(2)))
struct SenderCredentialTests {
    private func sendOnce(_ sim: SimulatorHarness, _ credentials: CredentialProvider) async throws -> DeliveryResult {
        let sender = try APNsSender(
            target: sim.target(), credentials: credentials,
            configuration: SenderConfiguration(maxAttempts: 2), sleeper: RecordingSleeper())
        let result = await sender.send(sim.request(testToken(1)))
        await sender.shutdown()
        return result
    }

    @Test(arguments: ["client.p12", "client-legacy.p12"])
    func p12IdentityIsAccepted(file: String) async throws {
        let dev = try CredentialFixture.make(label: "sender-\(file)")
        let sim = try await SimulatorHarness(dev: dev)
        let credentials = try CertificateCredentials(p12Path: dev.path(file), password: CredentialFixture.password(dev))
        let result = try await sendOnce(sim, credentials)
        await sim.stop()
        #expect(result.kind == .accepted)
        #expect(sim.simulator.counters.accepted == 1)
    }

    @Test func clientCertificateFromAnotherCAIsRefused() async throws {
        let dev = try CredentialFixture.make(label: "sender-stranger-dev")
        let sim = try await SimulatorHarness()  // trusts its own CA, not make-dev's
        let credentials = try CertificateCredentials(
            p12Path: dev.path("client.p12"), password: CredentialFixture.password(dev))
        let result = try await sendOnce(sim, credentials)
        await sim.stop()
        // The handshake is refused (TLS 1.3 reports it on the first read): never accepted, no HTTP answer.
        #expect(result.kind != .accepted)
        #expect(result.status == 0)
        #expect(sim.simulator.counters.accepted == 0)
    }

    @Test func anIdentityOpenSSLCannotUseIsRefusedAtConnectWithoutRetrying() async throws {
        let dev = try CredentialFixture.make(label: "sender-mismatched-key")
        let sim = try await SimulatorHarness(dev: dev)
        // make-dev's client certificate with the server's key: not decoded (the key does not match), so the PEM
        // goes to libcurl as given, which refuses it before sending anything.
        let identity = TLSIdentity(
            certificatePEM: try CredentialFixture.bytes(dev.path("client.pem")),
            privateKeyPEM: try CredentialFixture.bytes(dev.path("server.key")))
        #expect(identity.decoded == nil)
        let sleeper = RecordingSleeper()
        let sender = try APNsSender(
            target: sim.target(), credentials: FixedCertificate(tlsIdentity: identity),
            configuration: SenderConfiguration(maxAttempts: 3), sleeper: sleeper)
        let result = await sender.send(sim.request(testToken(1)))
        await sender.shutdown()
        await sim.stop()
        #expect(result.kind != .accepted)
        #expect(result.status == 0)
        // The message names our key, not the server's certificate (no verification ran).
        #expect(result.error?.contains("private key") == true)
        #expect(result.error?.contains("server's certificate") == false)
        #expect(sleeper.delays.isEmpty)
        #expect(sim.simulator.counters.accepted == 0)
    }

    @Test func aPEMIdentityIsDecodedOnceAndKeepsTheBytesItWasGiven() throws {
        let dev = try CredentialFixture.make(label: "sender-pem-identity")
        let certificate = try CredentialFixture.bytes(dev.path("client.pem"))
        let key = try CredentialFixture.bytes(dev.path("client.key"))
        let identity = TLSIdentity(certificatePEM: certificate, privateKeyPEM: key)
        #expect(identity.decoded != nil)
        #expect(identity.certificatePEM == certificate)
        #expect(identity.privateKeyPEM == key)
    }

    @Test func expiredP12IsRefusedBeforeConnecting() throws {
        let past = Date(timeIntervalSinceNow: -10 * 86_400)
        let dev = try CredentialFixture.make(days: 2, now: past, label: "sender-expired")
        #expect(throws: CredentialError.self) {
            _ = try CertificateCredentials(p12Path: dev.path("client.p12"), password: CredentialFixture.password(dev))
        }
        // The sender itself refuses a known-expired certificate, naming the date.
        #expect(throws: SenderError.self) {
            try APNsSender(
                target: SenderTarget(host: "127.0.0.1", port: 9), credentials: FixedCertificate(tlsIdentity: nil),
                certificateNotAfterMs: Int64(past.timeIntervalSince1970 * 1000) + 2 * 86_400_000)
        }
    }

    @Test func providerTokenModeRefreshesOnExpiredProviderToken() async throws {
        let dev = try CredentialFixture.make(label: "sender-p8")
        let offset = OffsetClock()
        let key = SimulatorJWTKey(
            keyId: DevCertificates.keyId, teamId: DevCertificates.teamId,
            publicKeyPEM: try String(contentsOfFile: dev.path("AuthKey_DEVKEY1234.pub.pem"), encoding: .utf8))
        let sim = try await SimulatorHarness(clientAuth: .token, jwtKeys: [key], dev: dev, clock: { offset.nowMs() })
        let credentials = try TokenCredentials(
            p8Path: dev.path("AuthKey_DEVKEY1234.p8"), keyId: DevCertificates.keyId, teamId: DevCertificates.teamId,
            now: { offset.now() })
        let sender = try APNsSender(
            target: sim.target(), credentials: credentials, configuration: SenderConfiguration(maxAttempts: 3),
            sleeper: RecordingSleeper())
        let first = await sender.send(sim.request(testToken(1)))
        // 61 minutes later the simulator calls the cached token expired; the sender refreshes once and retries.
        offset.advance(seconds: 61 * 60)
        let second = await sender.send(sim.request(testToken(2)))
        await sender.shutdown()
        await sim.stop()
        #expect(first.kind == .accepted)
        #expect(second.kind == .accepted)
        #expect(credentials.tokensGenerated == 2)
    }

    @Test func aSecondExpiredProviderTokenRightAfterARefreshIsACredentialStopNotARetryLoop() async throws {
        // APNs' clock runs 61 minutes ahead of ours: every token we make looks expired to it, and ours is too
        // young (under 20 minutes) to be regenerated.
        let dev = try CredentialFixture.make(label: "sender-p8-skew")
        let skewed = OffsetClock()
        skewed.advance(seconds: 61 * 60)
        let key = SimulatorJWTKey(
            keyId: DevCertificates.keyId, teamId: DevCertificates.teamId,
            publicKeyPEM: try String(contentsOfFile: dev.path("AuthKey_DEVKEY1234.pub.pem"), encoding: .utf8))
        let sim = try await SimulatorHarness(clientAuth: .token, jwtKeys: [key], dev: dev, clock: { skewed.nowMs() })
        let credentials = try TokenCredentials(
            p8Path: dev.path("AuthKey_DEVKEY1234.p8"), keyId: DevCertificates.keyId, teamId: DevCertificates.teamId)
        let sender = try APNsSender(
            target: sim.target(), credentials: credentials, configuration: SenderConfiguration(maxAttempts: 5),
            sleeper: RecordingSleeper())
        let result = await sender.send(sim.request(testToken(1)))
        await sender.shutdown()
        await sim.stop()
        #expect(result.kind == .unsent)
        #expect(result.reason == .expiredProviderToken)
        #expect(result.stop?.kind == .credentials)
        #expect(result.stop?.message.contains("ExpiredProviderToken again right after") == true)
        #expect(sim.simulator.counters.byReason["ExpiredProviderToken"] == 2)  // the request and one resend
        #expect(credentials.tokensGenerated == 1)
        #expect(sender.summary.stops.count == 1)
    }

    @Test func unknownSigningKeyIsACredentialFailureThatStopsTheEndpoint() async throws {
        let dev = try CredentialFixture.make(label: "sender-p8-unknown")
        let other = try CredentialFixture.make(label: "sender-p8-other")
        let key = SimulatorJWTKey(
            keyId: DevCertificates.keyId, teamId: DevCertificates.teamId,
            publicKeyPEM: try String(contentsOfFile: other.path("AuthKey_DEVKEY1234.pub.pem"), encoding: .utf8))
        let sim = try await SimulatorHarness(clientAuth: .token, jwtKeys: [key], dev: dev)
        let credentials = try TokenCredentials(
            p8Path: dev.path("AuthKey_DEVKEY1234.p8"), keyId: DevCertificates.keyId, teamId: DevCertificates.teamId)
        let sender = try APNsSender(target: sim.target(), credentials: credentials, sleeper: RecordingSleeper())
        let box = ResultBox()
        await sender.run(requests: (0..<50).map { sim.request(testToken($0)) }) { box.add($0) }
        let summary = sender.summary
        await sender.shutdown()
        await sim.stop()
        #expect(box.results.count == 50)
        // Refused credentials are never a device's final outcome: every notification comes back unsent, with
        // the stop naming the real cause.
        #expect(box.results.contains { $0.kind == .unsent && $0.reason == .invalidProviderToken })
        #expect(box.results.allSatisfy { $0.kind == .unsent && $0.stop?.kind == .credentials })
        #expect(box.results.allSatisfy { $0.stop?.message.contains("InvalidProviderToken") == true })
        #expect(summary.stops.count == 1)
        // Stopped: far fewer requests than notifications reached the server, none retried.
        #expect(sim.simulator.counters.requests <= 50)
    }
}

/// A wall clock that tests can move forward, shared by the simulator and the credentials.
final class OffsetClock: @unchecked Sendable {
    private let lock = NSLock()
    private var offset: TimeInterval = 0
    func advance(seconds: TimeInterval) { lock.lock(); offset += seconds; lock.unlock() }
    func now() -> Date { lock.lock(); defer { lock.unlock() }; return Date(timeIntervalSinceNow: offset) }
    func nowMs() -> Int64 { Int64(now().timeIntervalSince1970 * 1000) }
}
