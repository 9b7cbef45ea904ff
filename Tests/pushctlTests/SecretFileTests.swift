import Foundation
import TestSupport
import PushCore
import Testing

/// `SecretFile` through the binary: every kind of secret file the configuration can name is refused when other
/// users may read it (exit 2, one line naming the key, the file and the chmod that fixes it, nothing done) and
/// accepted at 0600 and 0640 (the service's group may read it); a directory or a FIFO at its path is refused too.
@Suite(.timeLimit(.minutes(2))) struct SecretFileTests {
    /// One kind of secret file: its configuration key, and the configuration that names it as `secret` (other
    /// files it needs are written 0600 beside it).
    struct Kind: CustomStringConvertible, Sendable {
        let key: String
        /// The top-level JSON members and the example app's members, with `$DB` for a PostgreSQL URL.
        let top: String
        let app: String
        var description: String { key }
    }

    static let sqlite = #""database": "registry.sqlite","#
    static let certificate = #""auth": {"p12": "client.p12", "passwordEnv": "PUSHCTL_TEST_UNUSED"}"#
    static let kinds: [Kind] = [
        Kind(key: "apps.example.auth.passwordFile", top: sqlite, app: #""auth": {"p12": "client.p12", "passwordFile": "secret"}"#),
        Kind(key: "apps.example.auth.p12", top: sqlite, app: #""auth": {"p12": "secret", "passwordEnv": "PUSHCTL_TEST_UNUSED"}"#),
        Kind(key: "apps.example.auth.p8", top: sqlite, app: #""auth": {"p8": "secret", "keyId": "ABC123DEFG", "teamId": "TEAM123456"}"#),
        Kind(key: "databasePasswordFile", top: #""database": "$DB", "databasePasswordFile": "secret","#, app: certificate),
        Kind(key: "proxyCredentialsFile", top: sqlite + #""proxy": "http://127.0.0.1:3128", "proxyCredentialsFile": "secret","#, app: certificate),
        Kind(key: "apps.example.proxyCredentialsFile", top: sqlite,
             app: certificate + #", "proxy": "http://127.0.0.1:3128", "proxyCredentialsFile": "secret""#),
        Kind(key: "apps.example.webhook.secretFile", top: sqlite,
             app: certificate + #", "webhook": {"url": "https://backend.example/hook", "secretFile": "secret"}"#),
    ]

    /// A directory with the configuration and `secret` at `mode` (the other files at 0600).
    static func world(_ kind: Kind, mode: Int) async throws -> (config: String, secret: String, dir: URL) {
        let dir = try CLI.temporaryDirectory()
        for (name, permissions) in [("client.p12", 0o600), ("secret", mode)] {
            let path = dir.appendingPathComponent(name).path
            #expect(FileManager.default.createFile(atPath: path, contents: Data("not really a secret\n".utf8)))
            // Set after creating: the umask does not apply to chmod.
            try FileManager.default.setAttributes([.posixPermissions: permissions], ofItemAtPath: path)
        }
        var top = kind.top
        if top.contains("$DB") { top = top.replacingOccurrences(of: "$DB", with: try await PostgresTestServer.shared().makeDatabase("secrets")) }
        let config = dir.appendingPathComponent("pushctl.json").path
        try #"{\#(top) "apps": {"example": {"topic": "com.example.app", "endpoint": "production", \#(kind.app)}}}"#
            .write(toFile: config, atomically: true, encoding: .utf8)
        return (config, dir.appendingPathComponent("secret").path, dir)
    }

    @Test(arguments: kinds, [0o644, 0o604, 0o606, 0o641])
    func aSecretFileOthersCanReachIsRefusedNamingTheFileAndTheFix(_ kind: Kind, mode: Int) async throws {
        let w = try await Self.world(kind, mode: mode)
        defer { try? FileManager.default.removeItem(at: w.dir) }
        let result = try await CLI.run(["tokens", "count", "--config", w.config, "--app", "example"])
        #expect(result.status == 2, "\(kind) \(String(mode, radix: 8)): \(result.stderr)")
        let octal = "0" + String(mode, radix: 8)
        #expect(result.stderr == "pushctl: \(kind.key): \(w.secret) is accessible by other users (mode \(octal)); "
            + "run chmod 600 \(w.secret) (or chmod 640 to let the service's group read it)\n")
        #expect(result.stdout.isEmpty)
        // Nothing done: the registry was not even opened.
        #expect(!FileManager.default.fileExists(atPath: w.dir.appendingPathComponent("registry.sqlite").path))
    }

    @Test(arguments: kinds, [0o600, 0o640, 0o400, 0o660])
    func aSecretFileOnlyItsOwnerAndGroupCanReadIsAccepted(_ kind: Kind, mode: Int) async throws {
        let w = try await Self.world(kind, mode: mode)
        defer { try? FileManager.default.removeItem(at: w.dir) }
        let result = try await CLI.run(["tokens", "count", "--config", w.config, "--app", "example"])
        #expect(result.status == 0, "\(kind) \(String(mode, radix: 8)): \(result.stderr)")
        #expect(result.stdout == "0\n")
    }

    /// The configuration's check opens each secret file and judges what it opened (the one secret-file loader): before,
    /// a stat of the path passed a directory or a FIFO of mode 0600 or 0700, and a FIFO then blocked whatever read it.
    @Test(arguments: kinds)
    func aSecretPathThatIsADirectoryOrAFIFOIsRefusedBeforeAnythingIsDone(_ kind: Kind) async throws {
        let w = try await Self.world(kind, mode: 0o600)
        defer { try? FileManager.default.removeItem(at: w.dir) }
        let cases: [(make: () -> Int32, what: String)] = [({ mkdir(w.secret, 0o700) }, "a directory"), ({ mkfifo(w.secret, 0o600) }, "a FIFO")]
        for (made, what) in cases {
            try FileManager.default.removeItem(atPath: w.secret)
            try #require(made() == 0)
            let result = try await CLI.run(["tokens", "count", "--config", w.config, "--app", "example"], timeout: 30)
            #expect(result.status == 2, "\(kind) \(what): \(result.stderr)")
            #expect(result.stderr == "pushctl: \(kind.key): \(w.secret) is not a regular file (\(what))\n")
            #expect(result.stdout.isEmpty)
            #expect(!FileManager.default.fileExists(atPath: w.dir.appendingPathComponent("registry.sqlite").path))
        }
    }

    @Test func serveRefusesItTooSoTheUnitDoesNotRestart() async throws {
        // Exit 2 is RestartPreventExitStatus in the shipped units: a configuration error stops the service.
        let w = try await Self.world(Self.kinds[0], mode: 0o644)
        defer { try? FileManager.default.removeItem(at: w.dir) }
        let result = try await CLI.run(["serve", "--config", w.config, "--port", "0", "--admin-port", "0"], timeout: 30)
        #expect(result.status == 2)
        #expect(result.stderr.contains("\(w.secret) is accessible by other users (mode 0644); run chmod 600 \(w.secret)"))
    }
}
