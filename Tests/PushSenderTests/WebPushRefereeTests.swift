import Crypto
import Foundation
import PushCore
import PushSender
import TestSupport
import Testing

/// Two implementations agree: what our sender encrypts and signs is checked by the reference Python libraries
/// (Tests/webpush/*.py; `make test` installs the pinned versions with Tests/referees/install.sh). A missing module
/// fails these tests; it never skips them.
@Suite struct WebPushRefereeTests {
    static let scripts = BuiltPushctl.packageRoot.appendingPathComponent("Tests/webpush")

    /// Runs `python3 Tests/webpush/<script>` with `request` as JSON on stdin; its JSON answer, or a failure with
    /// what it printed.
    static func referee(_ script: String, _ request: JSONValue) async throws -> (status: Int32, answer: JSONValue?, stderr: String) {
        let outcome = try await ProcessRunner.run(
            URL(fileURLWithPath: "/usr/bin/env"), ["python3", scripts.appendingPathComponent(script).path],
            stdin: String(decoding: request.encoded, as: UTF8.self), timeout: 60)
        #expect(outcome.status != 3, "\(script): a reference module is missing (run Tests/referees/install.sh): \(outcome.stderr)")
        let answer = outcome.status == 0 ? try JSONValue(parsing: outcome.stdout) : nil
        return (outcome.status, answer, outcome.stderr)
    }

    @Test func httpECEDecryptsWhatWeEncryptWithTheSubscriptionsPrivateKey() async throws {
        let browser = P256.KeyAgreement.PrivateKey()
        var auth = [UInt8](repeating: 0, count: 16)
        for index in auth.indices { auth[index] = UInt8.random(in: 0...255) }
        let keys = try WebPushEncryption.RecipientKeys(p256dh: Array(browser.publicKey.x963Representation), auth: auth)
        let texts: [(plaintext: [UInt8], padding: Int)] = [
            (Array(#"{"title":"Grüße","body":"A web push 🍉"}"#.utf8), 0),
            ([], 0),
            (Array(repeating: 0x7A, count: 3000), 993),
            ((0..<WebPushEncryption.maximumPlaintextLength).map { UInt8(truncatingIfNeeded: $0) }, 0),
        ]
        for (plaintext, padding) in texts {
            let body = try WebPushEncryption.encrypt(plaintext, for: keys, padding: padding)
            let result = try await Self.referee("decrypt.py", .object([
                ("body", .string(Base64URL.encode(body))),
                ("privateKey", .string(Base64URL.encode(browser.rawRepresentation))),
                ("auth", .string(Base64URL.encode(auth))),
            ]))
            try #require(result.status == 0, "http_ece refused \(plaintext.count) bytes: \(result.stderr)")
            #expect(result.answer?["plaintext"] == .string(Base64URL.encode(plaintext)))
            #expect(result.answer?["recordSize"] == .int(4096))
            #expect(result.answer?["length"]?.intValue ?? .max <= 4096)
        }
        // The referee can fail: a body for another subscription's key is refused.
        let other = P256.KeyAgreement.PrivateKey()
        let refused = try await Self.referee("decrypt.py", .object([
            ("body", .string(Base64URL.encode(try WebPushEncryption.encrypt([1, 2, 3], for: keys)))),
            ("privateKey", .string(Base64URL.encode(other.rawRepresentation))),
            ("auth", .string(Base64URL.encode(auth))),
        ]))
        #expect(refused.status == 1 && refused.stderr.contains("http_ece refused"))
    }

    @Test func pyVapidAndPyJWTVerifyOurHeaderAgainstTheKeyItCarries() async throws {
        let signer = try VAPIDSigner(key: P256.Signing.PrivateKey(), subject: "mailto:ops@example.com")
        for endpoint in ["https://web.push.apple.com/QGuQyavXutnMH5Zhk", "https://push.example.org:8443/s/1"] {
            let parsed = try WebPushEndpoint(parsing: endpoint)
            let before = Int64(Date().timeIntervalSince1970)
            let authorization = try signer.authorization(for: parsed)
            let after = Int64(Date().timeIntervalSince1970)
            let result = try await Self.referee("verify_vapid.py", .object([
                ("authorization", .string(authorization)),
                ("audience", .string(parsed.origin)),
                ("subject", .string("mailto:ops@example.com")),
            ]))
            try #require(result.status == 0, "\(endpoint): \(result.stderr)")
            #expect(result.answer?["claims"]?["aud"] == .string(parsed.origin))
            #expect(result.answer?["k"] == .string(signer.publicKey))
            let exp = try #require(result.answer?["claims"]?["exp"]?.intValue)
            // Signed between `before` and `after` (one token per origin, made on first use), for the token's lifetime.
            #expect((before + VAPIDSigner.tokenLifetime - 1...after + VAPIDSigner.tokenLifetime + 1).contains(exp), "exp \(exp)")
        }
        // The referee can fail: another origin's audience, another subject, another key's k.
        let header = try signer.authorization(origin: "https://web.push.apple.com")
        let foreignKey = try VAPIDSigner(key: P256.Signing.PrivateKey(), subject: "mailto:a@example.com").publicKey
        for (audience, subject, authorization, words) in [
            ("https://fcm.googleapis.com", "mailto:ops@example.com", header, "InvalidAudience"),
            ("https://web.push.apple.com", "mailto:other@example.com", header, "is not"),
            ("https://web.push.apple.com", "mailto:ops@example.com",
             header.replacingOccurrences(of: signer.publicKey, with: foreignKey),
             "py_vapid: the signature does not verify"),
        ] {
            let result = try await Self.referee("verify_vapid.py", .object([
                ("authorization", .string(authorization)), ("audience", .string(audience)), ("subject", .string(subject)),
            ]))
            #expect(result.status == 1 && result.stderr.contains(words), "\(words): \(result.stderr)")
        }
    }
}
