import Crypto
import Foundation
import PushCore
import PushSender
import Testing

/// `pushctl webpush key new`, through the built binary.
@Suite("pushctl webpush key") struct WebPushKeyCommandTests {
    private func pushctl(_ arguments: [String]) throws -> ProcessResult {
        let binary = try #require(CredentialFixture.pushctlPath, "build pushctl first (swift build)")
        return try runProcess(binary, arguments, timeout: 30)
    }

    @Test func newWritesAPrivateKeyFileAndPrintsItsApplicationServerKey() throws {
        let directory = try CredentialFixture.temporaryDirectory()
        let path = directory + "/vapid.pem"
        let made = try pushctl(["webpush", "key", "new", "--out", path])
        #expect(made.status == 0, "\(made.stderr)")
        let printed = made.stdout.trimmingCharacters(in: .newlines)
        #expect(made.stdout == printed + "\n")
        // The printed key is the file's public key, base64url of the uncompressed point (87 characters).
        let pem = try String(contentsOfFile: path, encoding: .utf8)
        #expect(pem.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        let key = try P256.Signing.PrivateKey(pemRepresentation: pem)
        #expect(printed == Base64URL.encode(key.publicKey.x963Representation) && printed.count == 87)
        var info = stat()
        #expect(stat(path, &info) == 0 && info.st_mode & 0o777 == 0o600)
        // The file is usable as it was made: a signer loads it (the secret-file mode rule passes).
        #expect(try VAPIDSigner(pemPath: path, subject: "mailto:ops@example.com").publicKey == printed)

        // Never over an existing key: exit 2, one line, the file untouched.
        let again = try pushctl(["webpush", "key", "new", "--out", path])
        #expect(again.status == 2)
        #expect(again.stderr.hasPrefix("pushctl: ") && again.stderr.contains("already exists"))
        #expect(again.stderr.split(separator: "\n").count == 1)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == pem)
        let missing = try pushctl(["webpush", "key", "new"])
        #expect(missing.status != 0)
        let noDirectory = try pushctl(["webpush", "key", "new", "--out", directory + "/none/vapid.pem"])
        #expect(noDirectory.status == 2 && !FileManager.default.fileExists(atPath: directory + "/none"))
    }
}
