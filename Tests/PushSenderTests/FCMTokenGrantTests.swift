import PushSimulator
import Foundation
import PushCore
import PushSender
import Synchronization
import Testing
import TestSupport

/// PushSender's real OAuth grant against the simulator's token endpoint (TLS verified with the simulator's CA):
/// a token is granted; with a short lifetime it is renewed; many concurrent callers cause one grant per renewal
/// period; a refused grant is a credential failure naming Google's error_description, not retried at once.
@Suite(.timeLimit(.minutes(1)))
struct FCMTokenGrantTests {
    /// Milliseconds since 1970, moved by hand; shared by the simulator and the cache so a renewal period passes at
    /// once (the simulator checks each assertion's iat against it).
    final class Clock: Sendable {
        private let ms = Mutex(Int64(Date().timeIntervalSince1970 * 1000))
        var nowMs: Int64 { ms.withLock { $0 } }
        var date: Date { Date(timeIntervalSince1970: Double(nowMs) / 1000) }
        func advance(seconds: Double) { ms.withLock { $0 += Int64(seconds * 1000) } }
    }

    /// A started simulator (token lifetime `lifetime` s) trusting a new development account, the account as
    /// PushSender loads it, and the simulator's CA file.
    static func withSimulator(
        lifetime: Int64 = 3599, clock: Clock = Clock(), trusted: Bool = true,
        _ body: (PushSimulator, FCMServiceAccount, String) async throws -> Void
    ) async throws {
        let pki = try SimulatorPKI()
        var configuration = SimulatorConfiguration(
            caPEM: pki.ca.certificatePEM, serverCertificatePEM: pki.server.certificatePEM,
            serverKeyPEM: pki.server.keyPEM, clientAuth: .either)
        configuration.accessTokenLifetime = lifetime
        configuration.clock = { clock.nowMs }
        let simulator = try PushSimulator(configuration: configuration)
        _ = try await simulator.start()
        do {
            let (account, json) = try await offThePool { try SimulatorServiceAccount.makeDevelopment(tokenURI: simulator.tokenURI) }
            if trusted { try simulator.trustServiceAccount(account) }
            let directory = try TemporaryDirectories.make("fcm-grant")
            let caFile = directory + "/ca.pem"
            try pki.ca.certificatePEM.write(toFile: caFile, atomically: true, encoding: .utf8)
            try await body(simulator, try FCMServiceAccount(json: Array(json.utf8), source: "dev.json"), caFile)
        } catch {
            try? await simulator.stop()
            throw error
        }
        try await simulator.stop()
    }

    @Test func aTokenIsGrantedOverVerifiedTLS() async throws {
        try await Self.withSimulator { simulator, account, caFile in
            let cache = AccessTokenCache(serviceAccount: account, caFile: caFile)
            let token = try await cache.token()
            #expect(token.value.hasPrefix("ya29."))
            #expect(simulator.isValidAccessToken(token.value))
            #expect(token.expiresAt.timeIntervalSince(token.receivedAt) == 3599)
            #expect(cache.grantsRequested == 1 && simulator.accessTokensGranted == 1)
            // Without the simulator's CA the server is not trusted: no grant, a transport error.
            await #expect(throws: TransportError.self) {
                _ = try await AccessTokenCache.requestGrant(account: account, issuedAt: Date())
            }
            #expect(simulator.accessTokensGranted == 1)
        }
    }

    @Test func manyConcurrentCallersCauseOneGrantPerRenewalPeriodAndTokensAreRenewed() async throws {
        let clock = Clock()
        try await Self.withSimulator(lifetime: 24, clock: clock) { simulator, account, caFile in
            let cache = AccessTokenCache(serviceAccount: account, caFile: caFile, now: { clock.date })
            var previous: String?
            for period in 1...5 {
                // 200 callers at once: the first one of the period starts the grant; the others wait for it (no
                // token yet) or keep sending with the old token while it is renewed, which has not expired.
                let values = try await withThrowingTaskGroup(of: String.self) { group in
                    for _ in 0..<200 { group.addTask { try await cache.token().value } }
                    return try await group.reduce(into: Set<String>()) { $0.insert($1) }
                }
                #expect(values.count <= 2, "period \(period): the old token or the renewed one")
                for value in values { #expect(simulator.isValidAccessToken(value), "period \(period): no caller got an expired token") }
                // The period's grant completes (the simulator counts it before its answer reaches the cache).
                var current = try await cache.token().value
                let deadline = ContinuousClock.now + .seconds(10)
                while current == previous, ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(10))
                    current = try await cache.token().value
                }
                #expect(current != previous, "period \(period): the token was renewed")
                #expect(cache.grantsRequested == period && simulator.accessTokensGranted == period, "period \(period): one grant")
                #expect(simulator.isValidAccessToken(current))
                previous = current
                // A 24 s token is renewed 2 s before it expires: 22.5 s later the next callers renew it.
                clock.advance(seconds: 22.5)
            }
        }
    }

    @Test func aRefusedGrantNamesGooglesDescriptionAndIsNotRetriedAtOnce() async throws {
        // A clock that stands still: however slowly a loaded machine runs the 21 calls, none is past the backoff.
        let clock = Clock()
        try await Self.withSimulator(clock: clock, trusted: false) { simulator, account, caFile in
            let cache = AccessTokenCache(serviceAccount: account, caFile: caFile, now: { clock.date })
            let error = await #expect(throws: CredentialError.self) { try await cache.token() }
            #expect(error?.description.contains("refused the grant (HTTP 400): invalid_grant: Invalid grant: account not found") == true,
                    "\(String(describing: error))")
            for _ in 0..<20 { await #expect(throws: CredentialError.self) { try await cache.token() } }
            #expect(cache.grantsRequested == 1)
            #expect(simulator.accessTokenRequestsRefused == 1, "the endpoint saw one request, not 21")
            // Once the backoff (at most 60 s) has passed, the next caller asks again.
            clock.advance(seconds: 61)
            await #expect(throws: CredentialError.self) { try await cache.token() }
            #expect(cache.grantsRequested == 2 && simulator.accessTokenRequestsRefused == 2)
        }
    }
}
