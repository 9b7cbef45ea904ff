import Foundation
import PushCore
import PushSender
import Testing

@Suite("CredentialsLoader") struct CredentialsLoaderTests {
    private func app(_ auth: AuthSettings) -> AppSettings {
        AppSettings(topic: CredentialFixture.topic, endpoint: .simulator, auth: auth)
    }

    @Test func certificateFromPasswordFile() throws {
        let certs = try CredentialFixture.make()
        let provider = try CredentialsLoader.makeCredentials(
            for: app(.certificate(p12: certs.path("client-legacy.p12"), password: .file(certs.path("client.p12.password")))).apns!,
            environment: [:])
        let credentials = try #require(provider as? CertificateCredentials)
        #expect(credentials.facts.topics == [CredentialFixture.topic])
        let health = CredentialHealth(provider, now: Date())
        #expect(health.kind == "certificate" && health.expired == false)
        #expect(health.certificate == credentials.facts)
        #expect((363...365).contains(health.daysLeft ?? 0))
    }

    @Test func appWindowReplacesTheSendersDefault() async throws {
        let certs = try CredentialFixture.make()
        var settings = app(.certificate(p12: certs.path("client.p12"), password: .file(certs.path("client.p12.password"))))
        let config = PushConfiguration(database: certs.path("unused.sqlite"), simulator: SimulatorSettings(certificates: certs.directory), apps: ["a": settings])
        let standard = try APNsSender.forApp(settings, in: config)
        #expect(standard.configuration.window == SenderConfiguration().window)
        await standard.shutdown()
        settings.window = 3000
        let wide = try APNsSender.forApp(settings, in: config)
        #expect(wide.configuration.window == 3000)
        await wide.shutdown()
    }

    @Test func certificateFromEnvironmentVariable() throws {
        let certs = try CredentialFixture.make()
        let settings = app(.certificate(p12: certs.path("client.p12"), password: .environment("PUSH_P12_PASSWORD")))
        let provider = try CredentialsLoader.makeCredentials(
            for: settings.apns!, environment: ["PUSH_P12_PASSWORD": CredentialFixture.password(certs)])
        #expect(provider.tlsIdentity != nil)
        let missing = #expect(throws: CredentialError.self) {
            try CredentialsLoader.makeCredentials(for: settings.apns!, environment: [:])
        }
        #expect(missing?.code == .missingPassword)
        #expect(missing?.message.contains("PUSH_P12_PASSWORD") == true)
        let wrong = #expect(throws: CredentialError.self) {
            try CredentialsLoader.makeCredentials(for: settings.apns!, environment: ["PUSH_P12_PASSWORD": "wrong"])
        }
        #expect(wrong?.code == .wrongPassword)
        #expect(wrong?.message.contains("wrong") == true && wrong?.message.contains("mac verify failure") == true)
    }

    /// The first line, as every one-line secret (`SecretFileLoader.firstLine(of:)`): before, the .p12 password lost one
    /// trailing newline only, so an editor's blank last line (`pw\n\n`) made the password `pw\n`.
    @Test func aPasswordFileGivesItsFirstLine() throws {
        let directory = try CredentialFixture.temporaryDirectory()
        let cases: [(String, String)] = [
            ("pw", "pw"), ("pw\n", "pw"), ("pw\r\n", "pw"), ("pw\n\n", "pw"), (" pw \n", " pw "), ("pw\nsecond line\n", "pw"),
        ]
        for (index, (content, expected)) in cases.enumerated() {
            let path = directory + "/p\(index)"
            try Data(content.utf8).write(to: URL(fileURLWithPath: path))
            #expect(chmod(path, 0o600) == 0)
            #expect(try CredentialsLoader.password(from: .file(path), environment: [:]) == expected)
        }
        let missing = #expect(throws: CredentialError.self) {
            try CredentialsLoader.password(from: .file(directory + "/none"), environment: [:])
        }
        #expect(missing?.code == .io)
    }

    /// The password file is read by the one secret-file loader: before it, a password file anyone could read was used.
    @Test func aPasswordFileOtherUsersCanReadIsRefusedNamingTheFile() throws {
        let certs = try CredentialFixture.make()
        let file = certs.path("client.p12.password")
        #expect(chmod(file, 0o644) == 0)
        let error = #expect(throws: CredentialError.self) {
            try CredentialsLoader.password(from: .file(file), environment: [:])
        }
        #expect(error?.code == .invalidInput)
        #expect(error?.message.hasPrefix("password file: \(file) is accessible by other users (mode 0644); run chmod 600 \(file)") == true)
    }

    @Test func tokenFromP8() throws {
        let certs = try CredentialFixture.make()
        let clock = ManualClock()
        let provider = try makeCredentials(
            for: app(.token(p8: certs.path("AuthKey_DEVKEY1234.p8"), keyId: DevCertificates.keyId, teamId: DevCertificates.teamId)).apns!,
            now: clock.function)
        let token = try #require(provider as? TokenCredentials)
        #expect(try provider.authorizationHeader()?.hasPrefix("bearer ") == true)
        #expect(token.tokensGenerated == 1)
        let health = CredentialHealth(provider, now: clock.now)
        #expect(health.kind == "token" && health.keyId == "DEVKEY1234" && health.teamId == "DEVTEAM123")
    }

    @Test func expiredCertificateFailsToLoad() throws {
        let certs = try CredentialFixture.make(days: 1, now: Date().addingTimeInterval(-5 * 86_400))
        let error = #expect(throws: CredentialError.self) {
            try CredentialsLoader.makeCredentials(
                for: app(.certificate(p12: certs.path("client.p12"), password: .file(certs.path("client.p12.password")))).apns!,
                environment: [:])
        }
        #expect(error?.code == .expired)
        #expect(error?.message.contains("client certificate expired on ") == true)
    }
}
