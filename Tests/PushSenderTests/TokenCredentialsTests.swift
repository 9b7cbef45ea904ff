import Crypto
import Foundation
import PushCore
import PushSender
import Testing

@Suite("TokenCredentials") struct TokenCredentialsTests {
    private static func base64URLDecode(_ text: Substring) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64)
    }

    private func credentials(_ clock: ManualClock) throws -> (TokenCredentials, DevCertificates) {
        let certs = try CredentialFixture.make()
        let credentials = try TokenCredentials(
            p8Path: certs.path("AuthKey_DEVKEY1234.p8"), keyId: DevCertificates.keyId, teamId: DevCertificates.teamId,
            now: clock.function)
        return (credentials, certs)
    }

    @Test func jwtHasApplesShapeAndVerifiesWithThePublicKey() throws {
        let clock = ManualClock()
        let (credentials, certs) = try credentials(clock)
        #expect(credentials.tlsIdentity == nil)
        let header = try #require(try credentials.authorizationHeader())
        #expect(header.hasPrefix("bearer "))
        let jwt = header.dropFirst("bearer ".count)
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        try #require(parts.count == 3)
        #expect(!jwt.contains("=") && !jwt.contains("+") && !jwt.contains("/"))
        let joseHeader = try JSONValue(parsing: Array(try #require(Self.base64URLDecode(parts[0]))))
        let claims = try JSONValue(parsing: Array(try #require(Self.base64URLDecode(parts[1]))))
        #expect(joseHeader == .object([("alg", .string("ES256")), ("kid", .string("DEVKEY1234"))]))
        #expect(claims == .object([("iss", .string("DEVTEAM123")), ("iat", .int(1_800_000_000))]))

        let signature = try #require(Self.base64URLDecode(parts[2]))
        #expect(signature.count == 64)  // raw r || s, not DER
        let publicKey = try P256.Signing.PublicKey(
            pemRepresentation: String(contentsOfFile: certs.path("AuthKey_DEVKEY1234.pub.pem"), encoding: .utf8))
        let ecdsa = try P256.Signing.ECDSASignature(rawRepresentation: signature)
        let signingInput = Data("\(parts[0]).\(parts[1])".utf8)
        #expect(publicKey.isValidSignature(ecdsa, for: signingInput))
        #expect(!publicKey.isValidSignature(ecdsa, for: Data("\(parts[0]).x\(parts[1])".utf8)))

        // Independent check with the openssl CLI (DER signature over the same input).
        if let openssl = CredentialFixture.opensslPath {
            let directory = try CredentialFixture.temporaryDirectory()
            try signingInput.write(to: URL(fileURLWithPath: directory + "/input"))
            try ecdsa.derRepresentation.write(to: URL(fileURLWithPath: directory + "/sig.der"))
            let result = try runProcess(
                openssl, ["dgst", "-sha256", "-verify", certs.path("AuthKey_DEVKEY1234.pub.pem"),
                          "-signature", directory + "/sig.der", directory + "/input"])
            #expect(result.status == 0 && result.stdout.contains("Verified OK"), "\(result.stdout) \(result.stderr)")
        }
    }

    @Test func tokenIsCachedAndRefreshedAfterFiftyMinutes() throws {
        let clock = ManualClock()
        let (credentials, _) = try credentials(clock)
        let first = try credentials.authorizationHeader()
        clock.advance(by: 49 * 60 + 59)
        #expect(try credentials.authorizationHeader() == first)
        #expect(credentials.tokensGenerated == 1)
        clock.advance(by: 1)
        let second = try credentials.authorizationHeader()
        #expect(second != first)
        #expect(credentials.tokensGenerated == 2)
        #expect(try credentials.authorizationHeader() == second)
    }

    @Test func expiredTokenIsRefreshedOnlyWhenTwentyMinutesOld() throws {
        let clock = ManualClock()
        let (credentials, _) = try credentials(clock)
        let first = try #require(try credentials.authorizationHeader())
        clock.advance(by: 19 * 60)
        credentials.providerTokenExpired(first)
        #expect(try credentials.authorizationHeader() == first, "a token younger than 20 minutes is kept")
        clock.advance(by: 60)
        credentials.providerTokenExpired(first)
        let second = try #require(try credentials.authorizationHeader())
        #expect(second != first)
        // A late report about the old token, or an immediate one about the new token, changes nothing.
        credentials.providerTokenExpired(first)
        credentials.providerTokenExpired(second)
        #expect(try credentials.authorizationHeader() == second)
        #expect(credentials.tokensGenerated == 2)
    }

    @Test func neverMoreThanOneTokenPerTwentyMinutesEvenWhenAskedConstantly() throws {
        let clock = ManualClock()
        let (credentials, _) = try credentials(clock)
        var issued: [(Date, String)] = []
        for _ in 0..<(3 * 60 * 6) {  // 3 hours in 10-second steps, "expired" after every request
            let header = try #require(try credentials.authorizationHeader())
            if issued.last?.1 != header { issued.append((clock.now, header)) }
            credentials.providerTokenExpired(header)
            clock.advance(by: 10)
        }
        #expect(issued.count == credentials.tokensGenerated)
        #expect(issued.count == 9)  // 3 h / 20 min
        for (earlier, later) in zip(issued, issued.dropFirst()) {
            #expect(later.0.timeIntervalSince(earlier.0) >= TokenCredentials.minimumRegenerationAge)
        }
    }

    @Test func concurrentCallersShareOneToken() async throws {
        let clock = ManualClock()
        let (credentials, _) = try credentials(clock)
        let headers = try await withThrowingTaskGroup(of: Set<String>.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    var seen = Set<String>()
                    for _ in 0..<500 { seen.insert(try credentials.authorizationHeader() ?? "") }
                    return seen
                }
            }
            return try await group.reduce(into: Set<String>()) { $0.formUnion($1) }
        }
        #expect(headers.count == 1)
        #expect(credentials.tokensGenerated == 1)
    }

    @Test func rejectsBadKeysAndIdentifiers() throws {
        let certs = try CredentialFixture.make()
        let pem = try String(contentsOfFile: certs.path("AuthKey_DEVKEY1234.p8"), encoding: .utf8)
        let badKey = #expect(throws: CredentialError.self) {
            try TokenCredentials(p8PEM: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n", keyId: "K", teamId: "T")
        }
        #expect(badKey?.code == .invalidInput)
        let badId = #expect(throws: CredentialError.self) {
            try TokenCredentials(p8PEM: pem, keyId: "KEY\"1", teamId: "T")
        }
        #expect(badId?.code == .invalidInput)
        let missing = #expect(throws: CredentialError.self) {
            try TokenCredentials(p8Path: certs.directory + "/nope.p8", keyId: "K", teamId: "T")
        }
        #expect(missing?.code == .io)
    }

    /// The .p8 is read by the one secret-file loader: before it, `TokenCredentials(p8Path:)` read any file it could.
    @Test func aP8OtherUsersCanReadIsRefusedNamingTheFile() throws {
        let certs = try CredentialFixture.make()
        let p8 = certs.path("AuthKey_DEVKEY1234.p8")
        #expect(chmod(p8, 0o644) == 0)
        let error = #expect(throws: CredentialError.self) {
            try TokenCredentials(p8Path: p8, keyId: DevCertificates.keyId, teamId: DevCertificates.teamId)
        }
        #expect(error?.code == .invalidInput)
        #expect(error?.message == ".p8 key: \(p8) is accessible by other users (mode 0644); run chmod 600 \(p8) (or chmod 640 to let the service's group read it)")
        #expect(chmod(p8, 0o640) == 0)
        _ = try TokenCredentials(p8Path: p8, keyId: DevCertificates.keyId, teamId: DevCertificates.teamId)
    }
}
