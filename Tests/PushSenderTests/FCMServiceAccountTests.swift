import PushCore
import Foundation
import PushSender
import Testing
import TestSupport

/// FCM's service-account file and its OAuth 2.0 JWT-bearer assertion; the assertion refereed by PyJWT.
@Suite struct FCMServiceAccountTests {
    static let env = URL(fileURLWithPath: "/usr/bin/env")

    /// A development service account in `directory`: a fresh RSA 2048 key (openssl, PKCS#8 as Google's files
    /// have it), the JSON file (mode 0600) and the public key's PEM. Returns the file's and the public key's paths.
    static func makeAccount(in directory: String, name: String = "account", tokenURI: String = "https://oauth2.googleapis.com/token",
                            mode: Int = 0o600, edit: (inout [String: Any]) -> Void = { _ in }) async throws -> (file: String, publicKey: String) {
        let keyPath = "\(directory)/\(name).key.pem", publicPath = "\(directory)/\(name).pub.pem"
        let gen = try await ProcessRunner.run(env, ["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", keyPath])
        try #require(gen.status == 0, "openssl genpkey: \(gen.stderr)")
        let pub = try await ProcessRunner.run(env, ["openssl", "pkey", "-in", keyPath, "-pubout", "-out", publicPath])
        try #require(pub.status == 0, "openssl pkey: \(pub.stderr)")
        var json: [String: Any] = [
            "type": "service_account", "project_id": "pushprovider-test", "private_key_id": "0123456789abcdef",
            "private_key": try String(contentsOfFile: keyPath, encoding: .utf8),
            "client_email": "pushctl@pushprovider-test.iam.gserviceaccount.com", "client_id": "1",
            "auth_uri": "https://accounts.google.com/o/oauth2/auth", "token_uri": tokenURI,
        ]
        edit(&json)
        let file = "\(directory)/\(name).json"
        try JSONSerialization.data(withJSONObject: json).write(to: URL(fileURLWithPath: file))
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: file)
        return (file, publicPath)
    }

    /// Runs Tests/fcm/assertion_referee.py (PyJWT) on `assertion`.
    static func referee(_ assertion: String, account: String, publicKey: String) async throws -> ProcessOutcome {
        let script = BuiltPushctl.packageRoot.appendingPathComponent("Tests/fcm/assertion_referee.py").path
        return try await ProcessRunner.run(env, ["python3", script, account, publicKey], stdin: assertion)
    }

    /// Two implementations agree: PyJWT verifies our RS256 assertion with the account's public key (iss, scope,
    /// aud, exp ≤ iat + 1 h, kid); and refuses one signed by another key or naming another audience. Fails, never
    /// skips, when PyJWT is not installed (`make referees`).
    @Test func pyJWTVerifiesTheAssertionAndRefusesAnotherKeyOrAudience() async throws {
        let directory = try TemporaryDirectories.make("fcm-referee")
        let (file, publicKey) = try await Self.makeAccount(in: directory)
        let account = try FCMServiceAccount(path: file)
        let assertion = try account.assertion(issuedAt: Date())
        let verdict = try await Self.referee(assertion, account: file, publicKey: publicKey)
        #expect(verdict.status == 0 && verdict.stdout == "ok\n", "referee: \(verdict.stderr)")

        let (other, _) = try await Self.makeAccount(in: directory, name: "other")
        let forged = try FCMServiceAccount(path: other).assertion(issuedAt: Date())
        let refused = try await Self.referee(forged, account: file, publicKey: publicKey)
        #expect(refused.status == 1 && refused.stderr.contains("InvalidSignatureError"), "\(refused.stderr)")

        let (elsewhere, elsewherePublic) = try await Self.makeAccount(in: directory, name: "elsewhere", tokenURI: "https://127.0.0.1:9/token")
        let misaddressed = try FCMServiceAccount(path: elsewhere).assertion(issuedAt: Date())
        let claims = try Self.claims(misaddressed)
        #expect(claims["aud"] as? String == "https://127.0.0.1:9/token")
        // Refereed against a copy of the file naming Google's endpoint: the audience is wrong.
        var json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: elsewhere))) as? [String: Any])
        json["token_uri"] = "https://oauth2.googleapis.com/token"
        let google = "\(directory)/elsewhere-google.json"
        try JSONSerialization.data(withJSONObject: json).write(to: URL(fileURLWithPath: google))
        let wrongAudience = try await Self.referee(misaddressed, account: google, publicKey: elsewherePublic)
        #expect(wrongAudience.status == 1 && wrongAudience.stderr.contains("InvalidAudienceError"), "\(wrongAudience.stderr)")
    }

    /// The header and claims, decoded here too, and the form body of the token request.
    @Test func theAssertionNamesTheAccountAndTheGrantBodyIsFormEncoded() async throws {
        let directory = try TemporaryDirectories.make("fcm-assertion")
        let (file, _) = try await Self.makeAccount(in: directory)
        let account = try FCMServiceAccount(path: file)
        #expect(account.projectId == "pushprovider-test")
        let issued = Date(timeIntervalSince1970: 1_800_000_000.75)
        let assertion = try account.assertion(issuedAt: issued)
        let header = try Self.segment(assertion, 0)
        #expect(header["alg"] as? String == "RS256" && header["typ"] as? String == "JWT" && header["kid"] as? String == "0123456789abcdef")
        let claims = try Self.claims(assertion)
        #expect(claims["iss"] as? String == "pushctl@pushprovider-test.iam.gserviceaccount.com")
        #expect(claims["scope"] as? String == "https://www.googleapis.com/auth/firebase.messaging")
        #expect(claims["aud"] as? String == "https://oauth2.googleapis.com/token")
        #expect(claims["iat"] as? Int == 1_800_000_000 && claims["exp"] as? Int == 1_800_003_600)
        // A longer lifetime is capped at Google's hour.
        #expect(try Self.claims(account.assertion(issuedAt: issued, lifetime: 7200))["exp"] as? Int == 1_800_003_600)
        let body = try account.grantRequestBody(issuedAt: issued)
        #expect(body.hasPrefix("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion="))
        #expect(try Self.claims(String(body.split(separator: "=", maxSplits: 2)[2]))["iss"] != nil)
    }

    /// Bad files: each refused with one line naming the file and the field.
    @Test func badServiceAccountFilesAreRefusedNamingTheFileAndTheField() async throws {
        let directory = try TemporaryDirectories.make("fcm-bad-account")
        func refusal(_ path: String) -> String {
            do { _ = try FCMServiceAccount(path: path, configurationKey: "apps.example.fcm.serviceAccount"); return "accepted" }
            catch { return error.message }
        }
        let (readable, _) = try await Self.makeAccount(in: directory, name: "readable", mode: 0o644)
        #expect(refusal(readable) == "apps.example.fcm.serviceAccount: \(readable) is accessible by other users (mode 0644); run chmod 600 \(readable) (or chmod 640 to let the service's group read it)")
        let (groupReadable, _) = try await Self.makeAccount(in: directory, name: "group", mode: 0o640)
        #expect(refusal(groupReadable) == "accepted")

        let notJSON = "\(directory)/not-json.json"
        _ = FileManager.default.createFile(atPath: notJSON, contents: Data("-----BEGIN PRIVATE KEY-----".utf8), attributes: [.posixPermissions: 0o600])
        #expect(refusal(notJSON).hasPrefix("\(notJSON): not a service-account JSON file (invalid JSON at byte"))

        let (noKey, _) = try await Self.makeAccount(in: directory, name: "nokey") { $0["private_key"] = nil }
        #expect(refusal(noKey) == "\(noKey): missing private_key")
        let (noEmail, _) = try await Self.makeAccount(in: directory, name: "noemail") { $0["client_email"] = 7 }
        #expect(refusal(noEmail) == "\(noEmail): client_email must be a non-empty string")
        let (user, _) = try await Self.makeAccount(in: directory, name: "user") { $0["type"] = "authorized_user" }
        #expect(refusal(user) == "\(user): type is 'authorized_user', not 'service_account'")
        let (plain, _) = try await Self.makeAccount(in: directory, name: "plain", tokenURI: "http://oauth2.googleapis.com/token")
        #expect(refusal(plain) == "\(plain): token_uri must be an https:// URL, not 'http://oauth2.googleapis.com/token'")

        // A P-256 key (an APNs .p8's kind) is not RSA.
        let ecPath = "\(directory)/ec.pem"
        let ec = try await ProcessRunner.run(Self.env, ["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", ecPath])
        try #require(ec.status == 0)
        let ecKey = try String(contentsOfFile: ecPath, encoding: .utf8)
        let (notRSA, _) = try await Self.makeAccount(in: directory, name: "ec") { $0["private_key"] = ecKey }
        #expect(refusal(notRSA) == "\(notRSA): private_key is not an RSA private key (PEM, 2048 bits or more)")
        #expect(!refusal(notRSA).contains("BEGIN"))

        let missing = "\(directory)/absent.json"
        #expect(refusal(missing) == "apps.example.fcm.serviceAccount: \(missing): no such file")
    }

    /// The file is read by the one secret-file loader, which judges the file it opened: before it, a directory there
    /// passed the mode check (a stat of the path) and failed later as "cannot read".
    @Test func aServiceAccountPathThatIsADirectoryIsRefusedAsNotARegularFile() throws {
        let directory = try TemporaryDirectories.make("fcm-directory-account")
        let account = directory + "/account.json"
        try FileManager.default.createDirectory(atPath: account, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        let error = #expect(throws: CredentialError.self) {
            try FCMServiceAccount(path: account, configurationKey: "apps.example.fcm.serviceAccount")
        }
        #expect(error?.code == .invalidInput)
        #expect(error?.message == "apps.example.fcm.serviceAccount: \(account) is not a regular file (a directory)")
    }

    static func segment(_ jwt: String, _ index: Int) throws -> [String: Any] {
        var text = String(jwt.split(separator: ".")[index]).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.count % 4 != 0 { text += "=" }
        let data = try #require(Data(base64Encoded: text))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    static func claims(_ jwt: String) throws -> [String: Any] { try segment(jwt, 1) }
}
