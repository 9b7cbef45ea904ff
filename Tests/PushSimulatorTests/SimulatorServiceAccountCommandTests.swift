import PushSimulator
import Foundation
import PushCore
import PushSender
import Testing
import TestSupport

/// `pushctl simulator --fcm-service-account FILE`, run as the built binary: it writes a development service account
/// (mode 0600, Google's format, token_uri = its own /token) that PushSender loads and the endpoint grants tokens to;
/// run again on the same file it trusts that account instead of making another.
@Suite(.timeLimit(.minutes(2)))
struct SimulatorServiceAccountCommandTests {
    /// A new PKI, its CA and the simulator's certificate and key written to DIR/certs (what `--certificates` reads).
    @discardableResult
    static func writeCertificates(in dir: String) throws -> SimulatorPKI {
        try FileManager.default.createDirectory(atPath: dir + "/certs", withIntermediateDirectories: true)
        let pki = try SimulatorPKI()
        try pki.ca.certificatePEM.write(toFile: dir + "/certs/ca.pem", atomically: true, encoding: .utf8)
        try pki.server.certificatePEM.write(toFile: dir + "/certs/server.pem", atomically: true, encoding: .utf8)
        try pki.server.keyPEM.write(toFile: dir + "/certs/server.key", atomically: true, encoding: .utf8)
        return pki
    }

    @Test func writesAnAccountOnceAndGrantsItsAssertionsOnEveryRun() async throws {
        let dir = try TemporaryDirectories.make("simcli-fcm")
        let pki = try Self.writeCertificates(in: dir)
        let file = dir + "/fcm-dev.json"

        var keys: [String] = []
        for run in 0..<2 {
            // Run outside the checkout: its Config/pushctl.json names a development FCM account (written by `make run`
            // and the readme stage) with the same client_email, which the simulator would trust too.
            let child = try Child([
                "simulator", "--certificates", dir + "/certs", "--port", "0", "--client-auth", "either",
                "--fcm-service-account", file, "--access-token-lifetime", "120",
            ], cwd: dir)
            defer { child.process.stop() }
            let listening = await child.wait(seconds: 30) { child.stdout.contains("listening on") }
            try #require(listening, "stdout: \(child.stdout) stderr: \(child.stderr)")
            #expect(child.stdout.contains(run == 0 ? "wrote FCM service account" : "FCM service account pushprovider-dev@"), "\(child.stdout)")
            let line = try #require(child.stdout.split(separator: "\n").first { $0.contains("listening on") })
            let port = try #require(Int(line.split(separator: ":").last?.prefix(while: \.isNumber) ?? ""))

            let mode = try #require(try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int)
            #expect(mode == 0o600)
            let json = try JSONValue(parsing: Array(try Data(contentsOf: URL(fileURLWithPath: file))))
            for field in ["type", "project_id", "private_key_id", "private_key", "client_email", "client_id", "auth_uri", "token_uri"] {
                #expect(json[field]?.stringValue?.isEmpty == false, "\(field)")
            }
            keys.append(json["private_key"]?.stringValue ?? "")
            let account = try FCMServiceAccount(path: file)
            if run == 0 { #expect(account.tokenURI == "https://127.0.0.1:\(port)/token") }

            let client = try await H2TestClient.connect(port: port, caPEM: pki.ca.certificatePEM, identity: nil)
            let answer = try await client.send(.init(
                method: "POST", path: "/token", headers: [("content-type", "application/x-www-form-urlencoded")],
                body: Array(try account.grantRequestBody(issuedAt: Date()).utf8)))
            await client.close()
            let body = try JSONValue(parsing: answer.body)
            #expect(answer.status == 200, "\(body.encodedString)")
            #expect(body["expires_in"]?.intValue == 120)

            child.process.terminate()
            #expect(await child.process.exited(within: 15))
        }
        #expect(keys[0] == keys[1], "the second run reuses the file")
    }

    /// An existing FILE is read by the one secret-file loader: before, one anyone could read was trusted as it was.
    @Test func anExistingAccountFileOtherUsersCanReadIsRefusedNamingTheFile() async throws {
        let dir = try TemporaryDirectories.make("simcli-fcm-exposed")
        try Self.writeCertificates(in: dir)
        let file = dir + "/fcm-dev.json"
        let made = try SimulatorServiceAccount.makeDevelopment(tokenURI: "https://127.0.0.1:1/token")
        #expect(FileManager.default.createFile(atPath: file, contents: Data(made.json.utf8)))
        #expect(chmod(file, 0o644) == 0)
        let outcome = try await ProcessRunner.run(
            BuiltPushctl.url, ["simulator", "--certificates", dir + "/certs", "--port", "0", "--client-auth", "either",
                               "--fcm-service-account", file], timeout: 60)
        #expect(outcome.status == 2, "\(outcome.stderr)")
        #expect(outcome.stderr == "pushctl: --fcm-service-account: \(file) is accessible by other users (mode 0644); run chmod 600 \(file) (or chmod 640 to let the service's group read it)\n")
        #expect(!outcome.stdout.contains("listening on"))
    }
}
