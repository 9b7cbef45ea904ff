import Foundation
import PushCore
import PushSender
import Testing
import TestSupport

/// `SenderProxy` reading the proxy's `user:password`: from the first line of a secret file (through the one
/// secret-file loader) or an environment variable.
@Suite struct SenderProxyTests {
    static func credentialsFile(_ contents: String, mode: mode_t = 0o600, label: String = #function) throws -> String {
        let file = try TemporaryDirectories.make("proxy-" + label) + "/proxy.credentials"
        #expect(FileManager.default.createFile(atPath: file, contents: Data(contents.utf8)))
        #expect(chmod(file, mode) == 0)
        return file
    }

    /// Before the loader's line rule, the file was split as Swift text, where `\r\n` is one character: a file saved
    /// with Windows line endings made the password `pass\r\n`, which the proxy refused.
    @Test(arguments: ["pushuser:pa:ss\n", "pushuser:pa:ss\r\n", "pushuser:pa:ss", "pushuser:pa:ss\nsecond line\n"])
    func theCredentialsAreTheFirstLineSplitAtTheFirstColon(contents: String) throws {
        let file = try Self.credentialsFile(contents, label: "line")
        let proxy = try SenderProxy(ProxySettings(host: "127.0.0.1", port: 3128, credentials: .file(file)))
        #expect(proxy.username == "pushuser" && proxy.password == "pa:ss")
        #expect(!proxy.description.contains("pa:ss"))
    }

    /// The credentials file is read by the one secret-file loader: before it, one anyone could read was used.
    @Test func aCredentialsFileOtherUsersCanReadIsRefusedNamingTheFile() throws {
        let file = try Self.credentialsFile("pushuser:secret\n", mode: 0o644)
        let error = #expect(throws: CredentialError.self) {
            try SenderProxy(ProxySettings(host: "127.0.0.1", port: 3128, credentials: .file(file)))
        }
        #expect(error?.code == .invalidInput)
        #expect(error?.message.hasPrefix("proxy credentials file: \(file) is accessible by other users (mode 0644)") == true)
        #expect(error?.message.contains("secret") == false)
    }

    @Test func aFirstLineWithoutAColonOrAMissingVariableIsRefusedWithoutTheSecret() throws {
        let file = try Self.credentialsFile("justapassword\n")
        let noColon = #expect(throws: CredentialError.self) {
            try SenderProxy(ProxySettings(host: "127.0.0.1", port: 3128, credentials: .file(file)))
        }
        #expect(noColon?.message == "proxy credentials file \(file) must hold user:password")
        let unset = #expect(throws: CredentialError.self) {
            try SenderProxy(ProxySettings(host: "127.0.0.1", port: 3128, credentials: .environment("PUSHPROVIDER_TEST_UNSET")), environment: [:])
        }
        #expect(unset?.code == .missingPassword)
        let fromEnvironment = try SenderProxy(
            ProxySettings(host: "127.0.0.1", port: 3128, credentials: .environment("P")), environment: ["P": "u:p"])
        #expect(fromEnvironment.username == "u" && fromEnvironment.password == "p")
    }
}
