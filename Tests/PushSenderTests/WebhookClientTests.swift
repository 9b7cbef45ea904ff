import Foundation
import PushCore
import Testing
import TestSupport

@testable import PushSender

/// `WebhookClient`'s signature and secret handling.
@Suite struct WebhookClientTests {
    @Test func hmacSHA256MatchesRFC4231() {
        // RFC 4231, test case 2.
        let mac = hmacSHA256(key: Array("Jefe".utf8), data: Array("what do ya want for nothing?".utf8))
        #expect(mac.map { String(format: "%02x", $0) }.joined() == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    @Test func theSignatureCoversTheTimestampAndTheBody() {
        let secret = Array("k".utf8)
        let a = WebhookClient.signature(secret: secret, timestamp: 1_796_112_000, body: Array("{}".utf8))
        #expect(a.hasPrefix("sha256=") && a.count == 7 + 64)
        #expect(a == "sha256=" + hmacSHA256(key: secret, data: Array("1796112000.{}".utf8)).map { String(format: "%02x", $0) }.joined())
        #expect(a != WebhookClient.signature(secret: secret, timestamp: 1_796_112_001, body: Array("{}".utf8)))
        #expect(a != WebhookClient.signature(secret: secret, timestamp: 1_796_112_000, body: Array("[]".utf8)))
    }

    @Test func theSecretComesFromTheFirstLineOfAFileOrAnEnvironmentVariable() throws {
        let dir = NSTemporaryDirectory() + "webhook-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try "line-one\nline-two\n".write(toFile: dir + "/secret", atomically: true, encoding: .utf8)
        #expect(chmod(dir + "/secret", 0o600) == 0)
        let fromFile = try WebhookClient(WebhookSettings(url: "https://example.com/hook", secret: .file(dir + "/secret")))
        let direct = WebhookClient(url: "https://example.com/hook", secret: Array("line-one".utf8))
        #expect(fromFile.url == "https://example.com/hook")
        _ = direct
        #expect(throws: CredentialError.self) {
            try WebhookClient(WebhookSettings(url: "https://x", secret: .environment("NOPE")), environment: [:])
        }
        #expect(throws: CredentialError.self) {
            try WebhookClient(WebhookSettings(url: "https://x", secret: .file(dir + "/missing")))
        }
        #expect(throws: CredentialError.self) {
            try WebhookClient(WebhookSettings(url: "https://x", secret: .environment("EMPTY")), environment: ["EMPTY": ""])
        }
    }

    /// The secret file is read by the one secret-file loader: before it, a webhook secret anyone could read was used.
    @Test func aSecretFileOtherUsersCanReadIsRefusedNamingTheFile() throws {
        let dir = try TemporaryDirectories.make("webhook-exposed")
        let file = dir + "/secret"
        #expect(FileManager.default.createFile(atPath: file, contents: Data("s3cret\n".utf8)))
        #expect(chmod(file, 0o644) == 0)
        let error = #expect(throws: CredentialError.self) {
            try WebhookClient(WebhookSettings(url: "https://example.com/hook", secret: .file(file)))
        }
        #expect(error?.code == .invalidInput)
        #expect(error?.message.hasPrefix("webhook secret file: \(file) is accessible by other users (mode 0644)") == true)
    }
}
