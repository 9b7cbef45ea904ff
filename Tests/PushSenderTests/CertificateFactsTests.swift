import PushCore
import Foundation
import PushSender
import Testing

@Suite("CertificateFacts") struct CertificateFactsTests {
    private func facts(_ certs: DevCertificates, _ name: String = "client.pem") throws -> CertificateFacts {
        try CertificateFacts(certificate: CredentialFixture.bytes(certs.path(name)))
    }

    @Test func developmentCertificate() throws {
        let facts = try facts(CredentialFixture.make(topic: "com.example.dev", environment: .development))
        #expect(facts.environment == .development)
        #expect(facts.topics == ["com.example.dev"])
        #expect(facts.subject.hasPrefix("UID = com.example.dev, CN = Apple Development IOS Push Services: com.example.dev"))
    }

    @Test func productionCertificate() throws {
        let facts = try facts(CredentialFixture.make(topic: "com.example.prod", environment: .production))
        #expect(facts.environment == .production)
        #expect(facts.topics == ["com.example.prod"])
    }

    @Test func universalCertificateWithSeveralTopics() throws {
        let facts = try facts(CredentialFixture.make(topic: "com.example.multi", environment: .universal))
        #expect(facts.environment == .universal)
        #expect(facts.topics == ["com.example.multi", "com.example.multi.voip", "com.example.multi.complication"])
        #expect(facts.subject.contains("CN = Apple Push Services: com.example.multi"))
    }

    @Test func certificatesWithoutApplesOIDsHaveNoEnvironment() throws {
        let facts = try facts(CredentialFixture.make(), "ca.pem")
        #expect(facts.environment == nil)
        #expect(facts.topics.isEmpty)
        #expect(facts.subject.contains("CN = PushProvider Development CA"))
    }

    @Test func daysLeftAndExpiryFollowTheGivenTime() {
        let facts = CertificateFacts(subject: "CN = x", topics: [], environment: nil, notBefore: 0, notAfter: 1_000_000)
        #expect(facts.daysLeft(now: Date(timeIntervalSince1970: 1_000_000 - 10.5 * 86_400)) == 10)
        #expect(facts.daysLeft(now: Date(timeIntervalSince1970: 1_000_000 - 1)) == 0)
        #expect(facts.daysLeft(now: Date(timeIntervalSince1970: 1_000_000 + 1)) == -1)
        #expect(!facts.isExpired(now: Date(timeIntervalSince1970: 999_999)))
        #expect(facts.isExpired(now: Date(timeIntervalSince1970: 1_000_000)))
        #expect(facts.validityError(now: Date(timeIntervalSince1970: 500)) == nil)
        #expect(facts.validityError(now: Date(timeIntervalSince1970: 1_000_000))?.code == .expired)
        #expect(facts.validityError(now: Date(timeIntervalSince1970: -1))?.code == .notYetValid)
        #expect(CertificateFacts.iso8601(1_738_324_800) == "2025-01-31T12:00:00Z")
    }

    @Test func topicsExtensionIsReadLeniently() {
        // SEQUENCE { "a.b", SEQUENCE { "app" }, "a.b.voip", SEQUENCE { "voip" } } built by hand.
        func utf8(_ s: String) -> [UInt8] { [0x0C, UInt8(s.utf8.count)] + Array(s.utf8) }
        func seq(_ c: [UInt8]) -> [UInt8] { [0x30, UInt8(c.count)] + c }
        let value = seq(utf8("a.b") + seq(utf8("app")) + utf8("a.b.voip") + seq(utf8("voip")))
        #expect(CertificateFacts.topics(inExtension: value) == ["a.b", "a.b.voip"])
        // Truncated: the readable prefix still counts.
        let truncated = utf8("a.b") + seq(utf8("app")) + [0x0C, 0x20, 0x61]
        #expect(CertificateFacts.topics(inExtension: truncated) == ["a.b"])
        #expect(CertificateFacts.topics(inExtension: []) == [])
        #expect(CertificateFacts.topics(inExtension: [0x05, 0x00]) == [])
        // Long-form lengths.
        let long = String(repeating: "x", count: 200)
        let longValue: [UInt8] = [0x30, 0x81, 203, 0x0C, 0x81, 200] + Array(long.utf8)
        #expect(CertificateFacts.topics(inExtension: longValue) == [long])
    }

    @Test func rejectsNonCertificates() {
        #expect { try CertificateFacts(certificate: Array("hello".utf8)) } throws: {
            ($0 as? CredentialError)?.code == .invalidInput
        }
    }

    @Test(.enabled(if: CredentialFixture.opensslPath != nil)) func matchesTheOpenSSLCommandLine() throws {
        let certs = try CredentialFixture.make(environment: .universal)
        let pem = try facts(certs)
        let openssl = CredentialFixture.opensslPath!
        let subject = try runProcess(openssl, ["x509", "-in", certs.path("client.pem"), "-noout", "-subject"])
        #expect(subject.stdout.trimmingCharacters(in: .newlines) == "subject=" + pem.subject)
        // DER input (Apple's .cer downloads) gives the same facts.
        let der = certs.path("client.cer")
        let convert = try runProcess(openssl, ["x509", "-in", certs.path("client.pem"), "-outform", "DER", "-out", der])
        #expect(convert.status == 0)
        #expect(try CertificateFacts(certificate: CredentialFixture.bytes(der)) == pem)
        // Dates agree with openssl's -dates (e.g. "notAfter=Nov 22 03:24:09 2027 GMT").
        let dates = try runProcess(openssl, ["x509", "-in", certs.path("client.pem"), "-noout", "-dates"])
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "MMM d HH:mm:ss yyyy 'GMT'"
        var parsed: [String: Int64] = [:]
        for line in dates.stdout.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1).map(String.init)
            let text = parts[1].split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
            parsed[parts[0]] = formatter.date(from: text).map { Int64($0.timeIntervalSince1970) }
        }
        #expect(parsed["notBefore"] == pem.notBefore)
        #expect(parsed["notAfter"] == pem.notAfter)
    }
}
