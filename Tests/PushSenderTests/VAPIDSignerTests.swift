import Crypto
import Foundation
import PushCore
import PushSender
import Testing

@Suite struct VAPIDSignerTests {
    static let apple = "https://web.push.apple.com"

    static func parts(_ header: String) throws -> (jose: JSONValue, claims: JSONValue, signature: [UInt8], signingInput: String, k: String) {
        #expect(header.hasPrefix("vapid t="))
        let params = header.dropFirst("vapid ".count).components(separatedBy: ", ")
        try #require(params.count == 2 && params[0].hasPrefix("t=") && params[1].hasPrefix("k="))
        let token = params[0].dropFirst(2)
        let pieces = token.split(separator: ".", omittingEmptySubsequences: false)
        try #require(pieces.count == 3)
        return (
            try JSONValue(parsing: try #require(Base64URL.decode(pieces[0]))),
            try JSONValue(parsing: try #require(Base64URL.decode(pieces[1]))),
            try #require(Base64URL.decode(pieces[2])),
            String(pieces[0] + "." + pieces[1]),
            String(params[1].dropFirst(2)))
    }

    @Test func theHeaderCarriesAnES256TokenForTheOriginAndTheKeyThatVerifiesIt() throws {
        let clock = ManualClock()
        let key = P256.Signing.PrivateKey()
        let signer = try VAPIDSigner(key: key, subject: "mailto:ops@example.com", now: clock.function)
        let endpoint = try WebPushEndpoint(parsing: "https://web.push.apple.com:443/QGuQ")
        let (jose, claims, signature, signingInput, k) = try Self.parts(try signer.authorization(for: endpoint))
        #expect(jose == .object([("typ", .string("JWT")), ("alg", .string("ES256"))]))
        #expect(claims == .object([("aud", .string(Self.apple)), ("exp", .int(1_800_000_000 + 12 * 3600)), ("sub", .string("mailto:ops@example.com"))]))
        #expect(k == signer.publicKey && k == Base64URL.encode(key.publicKey.x963Representation))
        #expect(signature.count == 64)  // raw r || s
        let publicKey = try P256.Signing.PublicKey(x963Representation: try #require(Base64URL.decode(k)))
        #expect(publicKey.isValidSignature(try P256.Signing.ECDSASignature(rawRepresentation: signature), for: Data(signingInput.utf8)))
        // The audience is the origin with its port when not 443.
        let other = try Self.parts(try signer.authorization(for: try WebPushEndpoint(parsing: "https://push.example.org:8443/a")))
        #expect(other.claims["aud"] == .string("https://push.example.org:8443"))
    }

    @Test func oneTokenPerOriginIsReusedAndRenewedBeforeItExpires() throws {
        let clock = ManualClock()
        let signer = try VAPIDSigner(key: P256.Signing.PrivateKey(), subject: "https://example.com/contact", now: clock.function)
        let first = try signer.authorization(origin: Self.apple)
        clock.advance(by: 5 * 3600)
        #expect(try signer.authorization(origin: Self.apple) == first)
        let google = try signer.authorization(origin: "https://fcm.googleapis.com")
        #expect(google != first && signer.tokensSigned == 2)
        clock.advance(by: 6 * 3600 - 1)  // 1 h + 1 s left: still reused
        #expect(try signer.authorization(origin: Self.apple) == first)
        clock.advance(by: 1)  // 1 h left: renewed
        let renewed = try signer.authorization(origin: Self.apple)
        #expect(renewed != first && signer.tokensSigned == 3)
        #expect(try Self.parts(renewed).claims["exp"] == .int(1_800_000_000 + 11 * 3600 + 12 * 3600))
        // A clock that jumps back past the margin gets a token whose exp is again 12 h ahead, never more.
        clock.advance(by: -3 * 3600)
        let back = try signer.authorization(origin: Self.apple)
        #expect(back != renewed)
        #expect(try Self.parts(back).claims["exp"] == .int(1_800_000_000 + 8 * 3600 + 12 * 3600))
    }

    @Test func theSubjectMustBeAMailtoOrHttpsContact() throws {
        for good in ["mailto:ops@example.com", "https://example.com", "https://example.com/push-contact"] {
            #expect(VAPIDSigner.subjectProblem(good) == nil, "\(good)")
        }
        for bad in ["", "ops@example.com", "mailto:", "mailto:ops", "mailto: ops@example.com", "Mailto:ops@example.com",
                    "http://example.com", "https://", "https://127.0.0.1/", "https://exa mple.com"] {
            #expect(VAPIDSigner.subjectProblem(bad) != nil, "\(bad)")
        }
        #expect(throws: CredentialError.self) { try VAPIDSigner(key: P256.Signing.PrivateKey(), subject: "mailto:nobody") }
    }

    @Test func theKeyFileIsPEMInEitherFormAndRefusedWhenOthersCanRead() throws {
        let directory = try CredentialFixture.temporaryDirectory()
        let key = P256.Signing.PrivateKey()
        let sec1 = directory + "/sec1.pem"
        let pkcs8 = directory + "/pkcs8.pem"
        // SEC1 as `openssl ecparam -genkey` writes it, PKCS#8 as swift-crypto (and `openssl genpkey`) do.
        try Data(key.pemRepresentation.utf8).write(to: URL(fileURLWithPath: pkcs8))
        let openssl = try #require(CredentialFixture.opensslPath)
        let converted = try runProcess(openssl, ["ec", "-inform", "PEM", "-in", pkcs8, "-out", sec1])
        #expect(converted.status == 0, "\(converted.stderr)")
        #expect(try String(contentsOfFile: sec1, encoding: .utf8).hasPrefix("-----BEGIN EC PRIVATE KEY-----"))
        for path in [sec1, pkcs8] {
            chmod(path, 0o600)
            let signer = try VAPIDSigner(pemPath: path, subject: "mailto:ops@example.com")
            #expect(signer.publicKey == Base64URL.encode(key.publicKey.x963Representation))
            chmod(path, 0o640)
            _ = try VAPIDSigner(pemPath: path, subject: "mailto:ops@example.com")
        }
        chmod(pkcs8, 0o644)
        let open = #expect(throws: CredentialError.self) {
            try VAPIDSigner(pemPath: pkcs8, configKey: "apps.web.webpush.vapidKey", subject: "mailto:ops@example.com")
        }
        #expect(open?.message == "apps.web.webpush.vapidKey: \(pkcs8) is accessible by other users (mode 0644); run chmod 600 \(pkcs8) (or chmod 640 to let the service's group read it)")
        let notAKey = directory + "/not.pem"
        try Data("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n".utf8).write(to: URL(fileURLWithPath: notAKey))
        chmod(notAKey, 0o600)
        #expect(throws: CredentialError.self) { try VAPIDSigner(pemPath: notAKey, subject: "mailto:ops@example.com") }
        #expect(throws: CredentialError.self) { try VAPIDSigner(pemPath: directory + "/missing.pem", subject: "mailto:ops@example.com") }
    }

    /// The key is read by the one secret-file loader, its size capped: before it, a file of any size was read whole
    /// and then refused only as "not a P-256 private key".
    @Test func aKeyFileOverTheSecretSizeLimitIsRefusedNamingTheFileAndTheLimit() throws {
        let directory = try CredentialFixture.temporaryDirectory()
        let path = directory + "/huge.pem"
        #expect(FileManager.default.createFile(atPath: path, contents: Data(P256.Signing.PrivateKey().pemRepresentation.utf8)))
        #expect(chmod(path, 0o600) == 0)
        // Sparse: the key, then zeros up to one byte over the limit.
        #expect(truncate(path, off_t(1 << 20) + 1) == 0)
        let error = #expect(throws: CredentialError.self) {
            try VAPIDSigner(pemPath: path, configKey: "apps.web.webpush.vapidKey", subject: "mailto:ops@example.com")
        }
        #expect(error?.code == .invalidInput)
        #expect(error?.message == "apps.web.webpush.vapidKey: \(path) is larger than 1048576 bytes, too large for a secret file")
    }
}
