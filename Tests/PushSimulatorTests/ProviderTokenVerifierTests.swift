import PushSimulator
import Crypto
import PushCore
import Synchronization
import Testing

/// Token authentication: ES256 provider tokens checked by key id, team id, signature and age.
@Suite(.timeLimit(.minutes(2)))
struct ProviderTokenVerifierTests {
    static let keyId = "ABC123DEFG"
    static let teamId = "TEAM123456"
    static let now: Int64 = 1_760_000_000_000

    func run(topics: [String]? = nil, _ body: (SimulatorFixture, P256.Signing.PrivateKey) async throws -> Void) async throws {
        let key = P256.Signing.PrivateKey()
        try await SimulatorFixture.run(
            .token,
            configure: {
                $0.jwtKeys = [SimulatorJWTKey(keyId: Self.keyId, teamId: Self.teamId, publicKeyPEM: key.publicKey.pemRepresentation, topics: topics)]
                $0.clock = { Self.now }
            }
        ) { f in try await body(f, key) }
    }

    func request(_ authorization: String?, topic: String = SimulatorFixture.topic) -> H2TestClient.Request {
        var headers = [("apns-topic", topic)]
        if let authorization { headers.append(("authorization", authorization)) }
        return notification(headers: headers)
    }

    @Test func acceptsAValidTokenAndRejectsBadOnes() async throws {
        try await run { f, key in
            let seconds = Self.now / 1000
            let valid = try providerToken(key: key, keyId: Self.keyId, teamId: Self.teamId, issuedAt: seconds - 60)
            let expired = try providerToken(key: key, keyId: Self.keyId, teamId: Self.teamId, issuedAt: seconds - 3601)
            let forged = try providerToken(key: P256.Signing.PrivateKey(), keyId: Self.keyId, teamId: Self.teamId, issuedAt: seconds)
            let otherKey = try providerToken(key: key, keyId: "ZZZ999ZZZZ", teamId: Self.teamId, issuedAt: seconds)
            let otherTeam = try providerToken(key: key, keyId: Self.keyId, teamId: "OTHERTEAM1", issuedAt: seconds)
            let future = try providerToken(key: key, keyId: Self.keyId, teamId: Self.teamId, issuedAt: seconds + 3600)
            let cases: [(String, String?, Int, String?)] = [
                ("valid", "bearer \(valid)", 200, nil),
                ("valid again (cached)", "bearer \(valid)", 200, nil),
                ("missing", nil, 403, "MissingProviderToken"),
                ("not bearer", "basic abc", 403, "MissingProviderToken"),
                ("expired", "bearer \(expired)", 403, "ExpiredProviderToken"),
                ("forged", "bearer \(forged)", 403, "InvalidProviderToken"),
                ("unknown key", "bearer \(otherKey)", 403, "InvalidProviderToken"),
                ("other team", "bearer \(otherTeam)", 403, "InvalidProviderToken"),
                ("from the future", "bearer \(future)", 403, "InvalidProviderToken"),
                ("garbage", "bearer a.b.c", 403, "InvalidProviderToken"),
            ]
            let client = try await f.connect()
            for (name, authorization, status, reason) in cases {
                let r = try await client.send(request(authorization))
                #expect(r.status == status, "\(name)")
                #expect(reasonOf(r) == reason, "\(name)")
            }
            let noTopic = try await client.send(notification(headers: [("authorization", "bearer \(valid)")]))
            await client.close()
            #expect(reasonOf(noTopic) == "MissingTopic")
            #expect(f.simulator.counters.accepted == 2)
        }
    }

    @Test func aCachedTokenStillExpires() async throws {
        let clock = ManualClock(Self.now)
        let key = P256.Signing.PrivateKey()
        try await SimulatorFixture.run(
            .token,
            configure: {
                $0.jwtKeys = [SimulatorJWTKey(keyId: Self.keyId, teamId: Self.teamId, publicKeyPEM: key.publicKey.pemRepresentation)]
                $0.clock = { clock.now }
            }
        ) { f in
            let token = try providerToken(key: key, keyId: Self.keyId, teamId: Self.teamId, issuedAt: Self.now / 1000)
            let client = try await f.connect()
            let fresh = try await client.send(request("bearer \(token)"))
            clock.now += 3_601_000
            let stale = try await client.send(request("bearer \(token)"))
            await client.close()
            #expect(fresh.status == 200)
            #expect(stale.status == 403)
            #expect(reasonOf(stale) == "ExpiredProviderToken")
        }
    }

    @Test func aKeyLimitedToTopicsRejectsOthers() async throws {
        try await run(topics: [SimulatorFixture.topic]) { f, key in
            let token = try providerToken(key: key, keyId: Self.keyId, teamId: Self.teamId, issuedAt: Self.now / 1000)
            let client = try await f.connect()
            let ok = try await client.send(request("bearer \(token)"))
            let other = try await client.send(request("bearer \(token)", topic: "com.other.app"))
            await client.close()
            #expect(ok.status == 200)
            #expect(reasonOf(other) == "TopicDisallowed")
        }
    }

    @Test func aBadKeyIsAConfigurationError() {
        #expect(throws: SimulatorError.self) {
            _ = try PushSimulator(
                configuration: .init(
                    serverCertificatePEM: "", serverKeyPEM: "", clientAuth: .token,
                    jwtKeys: [SimulatorJWTKey(keyId: "K", teamId: "T", publicKeyPEM: "nope")]))
        }
    }
}

/// A settable clock for expiry tests.
final class ManualClock: Sendable {
    private let value: Mutex<Int64>
    init(_ value: Int64) { self.value = Mutex(value) }
    var now: Int64 {
        get { value.withLock { $0 } }
        set { value.withLock { $0 = newValue } }
    }
}
