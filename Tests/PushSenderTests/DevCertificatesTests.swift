import PushCore
import Crypto
import Foundation
import PushSender
import Testing

@Suite("DevCertificates") struct DevCertificatesTests {
    @Test func writesEveryFileWithPrivateModesForSecrets() throws {
        let certs = try CredentialFixture.make()
        let secret: Set = ["ca.key", "server.key", "client.key", "client.p12", "client.p12.password",
                           "client-legacy.p12", "AuthKey_DEVKEY1234.p8"]
        for name in DevCertificates.fileNames {
            let attributes = try FileManager.default.attributesOfItem(atPath: certs.path(name))
            let mode = (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
            #expect(mode == (secret.contains(name) ? 0o600 : 0o644), "\(name) has mode \(String(mode, radix: 8))")
            #expect(((attributes[.size] as? NSNumber)?.intValue ?? 0) > 0, "\(name) is empty")
        }
        // No temporary files left behind.
        let listing = try FileManager.default.contentsOfDirectory(atPath: certs.directory)
        #expect(Set(listing) == Set(DevCertificates.fileNames))
        let password = try String(contentsOfFile: certs.path("client.p12.password"), encoding: .utf8)
        #expect(password.hasSuffix("\n") && password.count == 33)
    }

    @Test func refusesToOverwriteWithoutForce() throws {
        let certs = try CredentialFixture.make()
        let before = try CredentialFixture.bytes(certs.path("ca.pem"))
        #expect {
            try DevCertificates.make(in: certs.directory, options: .init(topic: "com.other.app"))
        } throws: { error in
            let error = error as? CredentialError
            return error?.code == .io && error?.message.contains("--force") == true
                && error?.message.contains("ca.pem") == true
        }
        #expect(try CredentialFixture.bytes(certs.path("ca.pem")) == before)
        try DevCertificates.make(in: certs.directory, options: .init(topic: "com.other.app", force: true))
        #expect(try CredentialFixture.bytes(certs.path("ca.pem")) != before)
        let facts = try CertificateFacts(certificate: CredentialFixture.bytes(certs.path("client.pem")))
        #expect(facts.topics == ["com.other.app"])
    }

    @Test func rejectsBadOptionsBeforeWritingAnything() throws {
        let directory = try CredentialFixture.temporaryDirectory() + "/sub"
        for options in [DevCertificates.Options(topic: ""), .init(topic: "has space"), .init(topic: "a.b", days: 0)] {
            #expect(throws: CredentialError.self) { try DevCertificates.make(in: directory, options: options) }
        }
        #expect(!FileManager.default.fileExists(atPath: directory))
    }

    @Test func validityFollowsTheInjectedClockAndDays() throws {
        let now = Date(timeIntervalSince1970: 1_900_000_000.7)
        let certs = try CredentialFixture.make(days: 10, now: now)
        for name in ["ca.pem", "server.pem", "client.pem"] {
            let facts = try CertificateFacts(certificate: CredentialFixture.bytes(certs.path(name)))
            #expect(facts.notBefore == 1_900_000_000 - 3600)
            #expect(facts.notAfter == 1_900_000_000 + 10 * 86_400)
        }
    }

    @Test func tokenKeyPairMatches() throws {
        let certs = try CredentialFixture.make()
        let p8 = try String(contentsOfFile: certs.path("AuthKey_DEVKEY1234.p8"), encoding: .utf8)
        let publicPEM = try String(contentsOfFile: certs.path("AuthKey_DEVKEY1234.pub.pem"), encoding: .utf8)
        #expect(p8.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        let key = try P256.Signing.PrivateKey(pemRepresentation: p8)
        let publicKey = try P256.Signing.PublicKey(pemRepresentation: publicPEM)
        #expect(key.publicKey.rawRepresentation == publicKey.rawRepresentation)
        #expect(DevCertificates.keyId == "DEVKEY1234" && DevCertificates.teamId == "DEVTEAM123")
    }

    // Cross-checks with the openssl CLI (a tool we did not write).

    @Test(.enabled(if: CredentialFixture.opensslPath != nil)) func opensslVerifiesTheChain() throws {
        let certs = try CredentialFixture.make()
        let result = try runProcess(
            CredentialFixture.opensslPath!,
            ["verify", "-CAfile", certs.path("ca.pem"), "-purpose", "any", certs.path("server.pem"), certs.path("client.pem")])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.components(separatedBy: ": OK").count == 3, "\(result.stdout)")
        let server = try runProcess(
            CredentialFixture.opensslPath!,
            ["verify", "-CAfile", certs.path("ca.pem"), "-purpose", "sslserver", "-verify_hostname", "localhost",
             "-verify_ip", "127.0.0.1", certs.path("server.pem")])
        #expect(server.status == 0, "\(server.stdout) \(server.stderr)")
        let client = try runProcess(
            CredentialFixture.opensslPath!,
            ["verify", "-CAfile", certs.path("ca.pem"), "-purpose", "sslclient", certs.path("client.pem")])
        #expect(client.status == 0, "\(client.stdout) \(client.stderr)")
    }

    @Test(.enabled(if: CredentialFixture.opensslPath != nil)) func serverNamesCanBeChosen() throws {
        let directory = try CredentialFixture.temporaryDirectory()
        let certs = try DevCertificates.make(
            in: directory, options: .init(topic: "a.b", serverNames: ["push.test", "10.1.2.3"]))
        func verify(_ flag: String, _ value: String) throws -> Int32 {
            try runProcess(CredentialFixture.opensslPath!,
                           ["verify", "-CAfile", certs.path("ca.pem"), flag, value, certs.path("server.pem")]).status
        }
        #expect(try verify("-verify_hostname", "push.test") == 0)
        #expect(try verify("-verify_ip", "10.1.2.3") == 0)
        #expect(try verify("-verify_hostname", "localhost") != 0)
        #expect(try verify("-verify_ip", "127.0.0.1") != 0)
        #expect(throws: CredentialError.self) {
            try DevCertificates.make(in: directory + "/x", options: .init(topic: "a.b", serverNames: []))
        }
    }

    @Test(.enabled(if: CredentialFixture.opensslPath != nil)) func p12EncryptionMatchesModernAndKeychainStyles() throws {
        let certs = try CredentialFixture.make()
        func info(_ name: String, _ extra: [String]) throws -> String {
            let result = try runProcess(
                CredentialFixture.opensslPath!,
                ["pkcs12", "-info", "-in", certs.path(name), "-passin", "file:" + certs.path("client.p12.password"),
                 "-nokeys", "-noout"] + extra)
            #expect(result.status == 0, "\(name): \(result.stderr)")
            return result.stdout + result.stderr
        }
        let legacy = try info("client-legacy.p12", ["-legacy"])
        #expect(legacy.contains("MAC: sha1"))
        #expect(legacy.contains("pbeWithSHA1And40BitRC2-CBC"))
        #expect(legacy.contains("pbeWithSHA1And3-KeyTripleDES-CBC"))
        let modern = try info("client.p12", [])
        #expect(modern.contains("MAC: sha256"))
        #expect(modern.components(separatedBy: "PBES2, PBKDF2, AES-256-CBC").count == 3, "\(modern)")
        #expect(!modern.contains("RC2") && !modern.contains("TripleDES"))
    }

    @Test(.enabled(if: CredentialFixture.opensslPath != nil)) func certificatesCarryApplesExtensions() throws {
        let certs = try CredentialFixture.make(topic: "org.example.push")
        let client = try runProcess(CredentialFixture.opensslPath!, ["x509", "-in", certs.path("client.pem"), "-noout", "-text"])
        #expect(client.status == 0)
        #expect(client.stdout.contains("1.2.840.113635.100.6.3.1"))
        #expect(!client.stdout.contains("1.2.840.113635.100.6.3.2"))
        #expect(client.stdout.contains("UID = org.example.push, CN = Apple Development IOS Push Services: org.example.push"))
        #expect(client.stdout.contains("TLS Web Client Authentication"))
        let server = try runProcess(CredentialFixture.opensslPath!, ["x509", "-in", certs.path("server.pem"), "-noout", "-text"])
        #expect(server.stdout.contains("DNS:localhost, IP Address:127.0.0.1"))
        #expect(server.stdout.contains("TLS Web Server Authentication"))
        let ca = try runProcess(CredentialFixture.opensslPath!, ["x509", "-in", certs.path("ca.pem"), "-noout", "-text"])
        #expect(ca.stdout.contains("CA:TRUE"))
        // The PEM keys on disk are the keys of the certificates.
        for (cert, key) in [("client.pem", "client.key"), ("server.pem", "server.key"), ("ca.pem", "ca.key")] {
            let fromCert = try runProcess(CredentialFixture.opensslPath!, ["x509", "-in", certs.path(cert), "-noout", "-pubkey"])
            let fromKey = try runProcess(CredentialFixture.opensslPath!, ["pkey", "-in", certs.path(key), "-pubout"])
            #expect(fromCert.stdout == fromKey.stdout && !fromKey.stdout.isEmpty, "\(cert) vs \(key)")
        }
    }
}
