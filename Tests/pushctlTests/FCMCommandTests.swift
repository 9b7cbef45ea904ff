import Foundation
import PushCore
import Testing

/// `pushctl fcm account new` and the configuration's `apps.ID.fcm.serviceAccount`, through the binary: a development
/// account is written 0600 and never over a file; a service-account file that is world-readable, not JSON or lacks a
/// field is refused (exit 2, one line naming the key and the file) before anything is done.
@Suite(.timeLimit(.minutes(2))) struct FCMCommandTests {
    @Test func aDevelopmentAccountIsWrittenPrivateAndNeverOverwritten() async throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("fcm.json").path
        let made = try await CLI.run(["fcm", "account", "new", "--out", file, "--project-id", "demo-app"])
        #expect(made.status == 0 && made.stdout == "pushprovider-dev@demo-app.iam.gserviceaccount.com\n", "\(made.stderr)")
        let mode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let json = try JSONValue(parsing: Array(try Data(contentsOf: URL(fileURLWithPath: file))))
        #expect(json["type"]?.stringValue == "service_account" && json["project_id"]?.stringValue == "demo-app")
        let again = try await CLI.run(["fcm", "account", "new", "--out", file])
        #expect(again.status == 2 && again.stderr.contains("cannot create \(file)"))
    }

    @Test func aServiceAccountFileThatIsNotOneIsRefusedNamingTheFile() async throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let account = dir.appendingPathComponent("fcm.json").path
        let good = try await CLI.run(["fcm", "account", "new", "--out", account])
        #expect(good.status == 0)
        let valid = try String(contentsOfFile: account, encoding: .utf8)
        let config = dir.appendingPathComponent("pushctl.json").path
        try #"""
            {"database": "registry.sqlite", "apps": {"example": {"topic": "com.example.app", "endpoint": "production",
             "auth": {"p8": "key.p8", "keyId": "ABC123DEFG", "teamId": "TEAM123456"},
             "fcm": {"serviceAccount": "fcm.json", "endpoint": "simulator"}}}}
            """#.write(toFile: config, atomically: true, encoding: .utf8)
        func write(_ text: String, mode: Int = 0o600) throws {
            try text.write(toFile: account, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: account)
        }
        var noKey = try JSONValue(parsing: Array(valid.utf8)).objectPairs ?? []
        noKey.removeAll { $0.0 == "private_key" }
        for (text, mode, says) in [
            (valid, 0o644, "apps.example.fcm.serviceAccount: \(account) is accessible by other users (mode 0644)"),
            ("not json", 0o600, "apps.example.fcm.serviceAccount: \(account): not a service-account JSON file"),
            (JSONValue.object(noKey).encodedString, 0o600, "apps.example.fcm.serviceAccount: \(account): missing private_key"),
            (valid.replacingOccurrences(of: "\"client_email\"", with: "\"email\""), 0o600, "\(account): missing client_email"),
            (valid.replacingOccurrences(of: "\"project_id\"", with: "\"project\""), 0o600, "\(account): missing project_id"),
        ] {
            try write(text, mode: mode)
            let result = try await CLI.run(["tokens", "count", "--config", config, "--app", "example"])
            #expect(result.status == 2 && result.stderr.hasPrefix("pushctl: ") && result.stderr.contains(says), "\(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1 && result.stdout.isEmpty)
        }
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("registry.sqlite").path), "nothing stored")
    }
}
