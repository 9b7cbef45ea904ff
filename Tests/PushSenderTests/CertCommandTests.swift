import Foundation
import PushCore
import PushSender
import Testing

/// `pushctl cert make-dev` and `pushctl cert inspect`, through the built binary.
@Suite("pushctl cert") struct CertCommandTests {
    private func pushctl(_ arguments: [String], environment: [String: String]? = nil) throws -> ProcessResult {
        let binary = try #require(CredentialFixture.pushctlPath, "build pushctl first (swift build)")
        return try runProcess(binary, arguments, environment: environment, timeout: 30)
    }

    @Test func makeDevWritesFilesAndRefusesToOverwrite() throws {
        let directory = try CredentialFixture.temporaryDirectory() + "/dev"
        let made = try pushctl(["cert", "make-dev", "--out", directory, "--topic", "com.example.cli"])
        #expect(made.status == 0, "\(made.stderr)")
        for name in DevCertificates.fileNames {
            #expect(FileManager.default.fileExists(atPath: directory + "/" + name), "\(name) missing")
            #expect(made.stdout.contains(directory + "/" + name))
        }
        let again = try pushctl(["cert", "make-dev", "--out", directory, "--topic", "com.example.cli"])
        #expect(again.status == 2)
        #expect(again.stderr.hasPrefix("pushctl: ") && again.stderr.contains("--force"))
        #expect(again.stderr.split(separator: "\n").count == 1)
        let forced = try pushctl(["cert", "make-dev", "--out", directory, "--topic", "com.example.cli", "--force"])
        #expect(forced.status == 0, "\(forced.stderr)")
        let badEnvironment = try pushctl(["cert", "make-dev", "--out", directory, "--topic", "t", "--environment", "x"])
        #expect(badEnvironment.status == 2)
    }

    @Test func inspectP12AsTextAndJSON() throws {
        let certs = try CredentialFixture.make(environment: .universal)
        let facts = try CertificateFacts(certificate: CredentialFixture.bytes(certs.path("client.pem")))
        let text = try pushctl(["cert", "inspect", certs.path("client.p12"), "--password-file", certs.path("client.p12.password")])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.contains("subject:     \(facts.subject)"))
        #expect(text.stdout.contains("environment: universal"))
        #expect(text.stdout.contains("not after:   \(facts.notAfterISO)"))

        let json = try pushctl(
            ["cert", "inspect", certs.path("client-legacy.p12"), "--password-env", "P12_PW", "--json"],
            environment: ["P12_PW": CredentialFixture.password(certs)])
        #expect(json.status == 0, "\(json.stderr)")
        let report = try JSONValue(parsing: json.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(report["subject"] == .string(facts.subject))
        #expect(report["topics"] == .array(facts.topics.map(JSONValue.string)))
        #expect(report["environment"] == .string("universal"))
        #expect(report["notBefore"] == .string(facts.notBeforeISO))
        #expect(report["notAfter"] == .string(facts.notAfterISO))
        #expect(report["daysLeft"] == .int(Int64(facts.daysLeft(now: Date()))))
        #expect(report["status"] == .string("ok"))
    }

    @Test func inspectPEMNeedsNoPassword() throws {
        let certs = try CredentialFixture.make()
        let result = try pushctl(["cert", "inspect", certs.path("client.pem"), "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let report = try JSONValue(parsing: result.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(report["environment"] == .string("development"))
        #expect(report["topics"] == .array([.string(CredentialFixture.topic)]))
    }

    @Test func expiringAndExpiredExitOne() throws {
        let soon = try CredentialFixture.make(days: 10)
        let warned = try pushctl(["cert", "inspect", soon.path("client.pem"), "--json"])
        #expect(warned.status == 1)
        #expect(try JSONValue(parsing: warned.stdout.trimmingCharacters(in: .newlines))["status"] == .string("expiring"))
        #expect(warned.stderr.contains("expires on"))
        let relaxed = try pushctl(["cert", "inspect", soon.path("client.pem"), "--warn-days", "5"])
        #expect(relaxed.status == 0, "\(relaxed.stderr)")

        let old = try CredentialFixture.make(days: 30, now: Date().addingTimeInterval(-100 * 86_400))
        let facts = try CertificateFacts(certificate: CredentialFixture.bytes(old.path("client.pem")))
        let expired = try pushctl(["cert", "inspect", old.path("client.p12"), "--password-file", old.path("client.p12.password")])
        #expect(expired.status == 1)
        #expect(expired.stdout.contains("status:      expired"))
        #expect(expired.stderr == "pushctl: certificate expired on \(facts.notAfterISO)\n")
    }

    @Test func badInputExitsTwoWithOneLine() throws {
        let certs = try CredentialFixture.make()
        let directory = certs.directory
        try Data("wrong\n".utf8).write(to: URL(fileURLWithPath: directory + "/wrong.password"))
        #expect(chmod(directory + "/wrong.password", 0o600) == 0)
        let cases: [[String]] = [
            ["cert", "inspect", directory + "/missing.p12", "--password-file", certs.path("client.p12.password")],
            ["cert", "inspect", certs.path("client.p12"), "--password-file", directory + "/wrong.password"],
            ["cert", "inspect", certs.path("client.p12")],
            ["cert", "inspect", certs.path("client.p12.password")],
            ["cert", "inspect", certs.path("client.p12"), "--password", "secret"],
            ["cert", "inspect", certs.path("client.pem"), "--warn-days", "-1"],
        ]
        for arguments in cases {
            let result = try pushctl(arguments)
            #expect(result.status == 2, "\(arguments): \(result.stdout) \(result.stderr)")
            #expect(result.stderr.hasPrefix("pushctl: ") && result.stderr.split(separator: "\n").count == 1,
                    "\(arguments): \(result.stderr)")
            #expect(result.stdout.isEmpty)
        }
        let wrong = try pushctl(["cert", "inspect", certs.path("client.p12"), "--password-file", directory + "/wrong.password"])
        #expect(wrong.stderr.contains("wrong password or corrupt .p12 (mac verify failure)"))
    }

    /// `cert inspect` reads a .p12 and its password file through the one secret-file loader, as the configuration's
    /// readers do: before, it read them whoever else could. A PEM certificate is public and still read at any mode.
    @Test func inspectRefusesAP12OrAPasswordFileOtherUsersCanRead() throws {
        let certs = try CredentialFixture.make()
        let p12 = certs.path("client.p12"), password = certs.path("client.p12.password")
        #expect(chmod(p12, 0o644) == 0)
        let exposedP12 = try pushctl(["cert", "inspect", p12, "--password-file", password])
        #expect(exposedP12.status == 2)
        #expect(exposedP12.stderr == "pushctl: .p12 file: \(p12) is accessible by other users (mode 0644); run chmod 600 \(p12) (or chmod 640 to let the service's group read it)\n")
        #expect(exposedP12.stdout.isEmpty)
        #expect(chmod(p12, 0o600) == 0 && chmod(password, 0o604) == 0)
        let exposedPassword = try pushctl(["cert", "inspect", p12, "--password-file", password])
        #expect(exposedPassword.status == 2)
        #expect(exposedPassword.stderr.contains("password file: \(password) is accessible by other users (mode 0604)"), "\(exposedPassword.stderr)")
        #expect(exposedPassword.stderr.split(separator: "\n").count == 1 && exposedPassword.stdout.isEmpty)
        #expect(chmod(certs.path("client.pem"), 0o644) == 0)
        let pem = try pushctl(["cert", "inspect", certs.path("client.pem")])
        #expect(pem.status == 0, "\(pem.stderr)")
    }
}
