import PushCore
import Foundation
import PushSender
import Testing

@Suite("CertificateCredentials") struct CertificateCredentialsTests {
    @Test func modernAndLegacyP12LoadWithIdenticalFacts() throws {
        let certs = try CredentialFixture.make(environment: .universal)
        let password = try CredentialFixture.password(certs)
        let modern = try CertificateCredentials(p12Path: certs.path("client.p12"), password: password)
        let legacy = try CertificateCredentials(p12Path: certs.path("client-legacy.p12"), password: password)
        let pemFacts = try CertificateFacts(certificate: CredentialFixture.bytes(certs.path("client.pem")))
        #expect(modern.facts == pemFacts)
        #expect(legacy.facts == pemFacts)
        // The identity is the certificate and key make-dev wrote as PEM, byte for byte.
        for credentials in [modern, legacy] {
            let identity = try #require(credentials.tlsIdentity)
            #expect(identity.certificatePEM == (try CredentialFixture.bytes(certs.path("client.pem"))))
            #expect(identity.privateKeyPEM == (try CredentialFixture.bytes(certs.path("client.key"))))
            #expect(try credentials.authorizationHeader() == nil)
        }
    }

    @Test func wrongPasswordIsAClearError() throws {
        let certs = try CredentialFixture.make()
        for name in ["client.p12", "client-legacy.p12"] {
            #expect {
                try CertificateCredentials(p12Path: certs.path(name), password: "not-the-password")
            } throws: { error in
                guard let error = error as? CredentialError else { return false }
                return error.code == .wrongPassword
                    && error.message == "\(certs.path(name)): wrong password or corrupt .p12 (mac verify failure)"
            }
        }
    }

    @Test func aP12ExportedWithAnEmptyPasswordOpensWithItAndOnlyWithIt() throws {
        let openssl = try #require(CredentialFixture.opensslPath, "the openssl command-line tool")
        let certs = try CredentialFixture.make()
        let p12 = certs.path("empty-password.p12")
        let export = try runProcess(openssl, [
            "pkcs12", "-export", "-in", certs.path("client.pem"), "-inkey", certs.path("client.key"),
            "-passout", "pass:", "-out", p12,
        ])
        #expect(export.status == 0, "\(export.stderr)")
        let credentials = try CertificateCredentials(p12Path: p12, password: "")
        #expect(credentials.tlsIdentity?.certificatePEM == (try CredentialFixture.bytes(certs.path("client.pem"))))
        #expect { try CertificateCredentials(p12Path: p12, password: "not-empty") } throws: {
            ($0 as? CredentialError)?.code == .wrongPassword
        }
    }

    @Test func expiredCertificateIsRefusedNamingTheDate() throws {
        // Issued 400 days ago for 30 days.
        let certs = try CredentialFixture.make(days: 30, now: Date().addingTimeInterval(-400 * 86_400))
        let facts = try CertificateFacts(certificate: CredentialFixture.bytes(certs.path("client.pem")))
        #expect {
            try CertificateCredentials(p12Path: certs.path("client.p12"), password: CredentialFixture.password(certs))
        } throws: { error in
            guard let error = error as? CredentialError else { return false }
            return error.code == .expired && error.message.contains("client certificate expired on \(facts.notAfterISO)")
        }
        #expect(facts.notAfterISO.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ/) != nil)
        // Still readable for inspection.
        let loaded = try CertificateCredentials.load(
            p12: CredentialFixture.bytes(certs.path("client.p12")), password: CredentialFixture.password(certs))
        #expect(loaded.facts == facts)
    }

    @Test func certificateThatExpiresAfterLoadingIsRefusedAtSendTime() throws {
        let start = Date()
        let certs = try CredentialFixture.make(days: 2, now: start)
        let clock = ManualClock(start)
        let credentials = try CertificateCredentials(
            p12Path: certs.path("client.p12"), password: CredentialFixture.password(certs), now: clock.function)
        #expect(try credentials.authorizationHeader() == nil)
        clock.advance(by: 3 * 86_400)
        #expect { try credentials.authorizationHeader() } throws: { error in
            (error as? CredentialError)?.code == .expired
                && (error as? CredentialError)?.message.contains(credentials.facts.notAfterISO) == true
        }
    }

    @Test func notYetValidCertificateIsRefused() throws {
        let certs = try CredentialFixture.make(now: Date().addingTimeInterval(10 * 86_400))
        #expect {
            try CertificateCredentials(p12Path: certs.path("client.p12"), password: CredentialFixture.password(certs))
        } throws: { ($0 as? CredentialError)?.code == .notYetValid }
    }

    @Test func garbageAndMissingFilesAreErrors() throws {
        let directory = try CredentialFixture.temporaryDirectory()
        let garbage = directory + "/garbage.p12"
        try Data("not a p12".utf8).write(to: URL(fileURLWithPath: garbage))
        #expect(chmod(garbage, 0o600) == 0)
        #expect { try CertificateCredentials(p12Path: garbage, password: "x") } throws: {
            ($0 as? CredentialError)?.code == .invalidInput && ($0 as? CredentialError)?.message.contains("accessible") == false
        }
        #expect { try CertificateCredentials(p12Path: directory + "/missing.p12", password: "x") } throws: {
            ($0 as? CredentialError)?.code == .io && ($0 as? CredentialError)?.message.contains("missing.p12") == true
        }
    }

    /// The .p12 is read by the one secret-file loader: before it, `CertificateCredentials(p12Path:)` read any file it
    /// could, whoever else could read it too.
    @Test func aP12OtherUsersCanReadIsRefusedNamingTheFile() throws {
        let certs = try CredentialFixture.make()
        let p12 = certs.path("client.p12")
        #expect(chmod(p12, 0o604) == 0)
        let error = #expect(throws: CredentialError.self) {
            try CertificateCredentials(p12Path: p12, password: CredentialFixture.password(certs))
        }
        #expect(error?.code == .invalidInput)
        #expect(error?.message == ".p12 file: \(p12) is accessible by other users (mode 0604); run chmod 600 \(p12) (or chmod 640 to let the service's group read it)")
        #expect(chmod(p12, 0o640) == 0)
        _ = try CertificateCredentials(p12Path: p12, password: CredentialFixture.password(certs))
    }

    @Test func legacyProviderIsLoaded() {
        OpenSSLLibrary.loadProviders()
        #expect(OpenSSLLibrary.legacyProviderLoaded)
    }
}
