import Foundation
import PushCore
import Testing

/// `PUSHCTL_` variables override a file's per-deployment keys (docs/configuration.md, "From the environment"): one
/// naming rule, every listed key, secrets only as file paths, unknown variables refused, values never echoed.
@Suite struct ConfigurationEnvironmentTests {
    static let file = #"""
        {"database": "postgres://push@db.example.internal/push", "databasePasswordEnv": "PUSHCTL_DB_SECRET_SOURCE",
         "apps": {
           "example-live": {"apns": {"topic": "com.example.app", "auth": {"p8": "k.p8", "keyId": "K", "teamId": "T"}},
                            "webpush": {"vapidKey": "vapid.pem", "subject": "mailto:ops@example.com"},
                            "fcm": {"serviceAccount": "firebase.json"},
                            "webhook": {"url": "https://hooks.example.com/push", "secretFile": "hook.secret"}},
           "legacy": {"topic": "com.example.legacy", "auth": {"p12": "client.p12", "passwordFile": "client.password"}}}}
        """#

    func load(_ variables: [String: String], file: String = Self.file) throws(ConfigurationError) -> PushConfiguration {
        try PushConfiguration(
            json: Array(file.utf8), baseDirectory: "/etc/pushprovider", zones: .foundation(),
            environment: ConfigurationEnvironment(variables, workingDirectory: "/run/pod"))
    }

    func files(_ config: PushConfiguration) -> [String: String] {
        Dictionary(config.secretFiles.map { ($0.key, $0.path) }, uniquingKeysWith: { a, _ in a })
    }

    @Test func everyDocumentedVariableSetsItsKeyOverTheFile() throws {
        let config = try load([
            "PUSHCTL_DATABASE": "postgres://push@db.internal:5432/push",
            "PUSHCTL_DATABASE_PASSWORD_FILE": "/var/run/secrets/db/password",
            "PUSHCTL_SERVER_HOST": "0.0.0.0", "PUSHCTL_SERVER_PORT": "8080",
            "PUSHCTL_ADMIN_HOST": "0.0.0.0", "PUSHCTL_ADMIN_PORT": "9090",
            "PUSHCTL_SIMULATOR_HOST": "127.0.0.2", "PUSHCTL_SIMULATOR_PORT": "2297",
            "PUSHCTL_APP_EXAMPLE_LIVE_APNS_P8": "/secrets/apns/key.p8",
            "PUSHCTL_APP_EXAMPLE_LIVE_WEBPUSH_VAPID_KEY": "/secrets/vapid/key.pem",
            "PUSHCTL_APP_EXAMPLE_LIVE_FCM_SERVICE_ACCOUNT": "/secrets/fcm/account.json",
            "PUSHCTL_APP_EXAMPLE_LIVE_WEBHOOK_SECRET_FILE": "/secrets/hook/secret",
            "PUSHCTL_APP_EXAMPLE_LIVE_USER_SECRET_FILE": "user.secret",
            "PUSHCTL_APP_LEGACY_APNS_P12": "/secrets/legacy/client.p12",
            "PUSHCTL_APP_LEGACY_APNS_PASSWORD_FILE": "/secrets/legacy/password",
            "PUSHCTL_CONFIG": "/etc/pushprovider/pushctl.json", "PUSHCTL_LOG_FORMAT": "json", "HOME": "/root",
        ])
        #expect(config.database == "postgres://push@db.internal:5432/push")
        // The file-path form replaces the file's variable form of the same secret.
        #expect(config.databasePasswordFile == "/var/run/secrets/db/password" && config.databasePasswordEnv == nil)
        #expect(config.server.host == "0.0.0.0" && config.server.port == 8080)
        #expect(config.server.admin.host == "0.0.0.0" && config.server.admin.port == 9090)
        #expect(config.simulator.host == "127.0.0.2" && config.simulator.port == 2297)
        let f = files(config)
        #expect(f["apps.example-live.apns.auth.p8"] == "/secrets/apns/key.p8")
        #expect(f["apps.example-live.webpush.vapidKey"] == "/secrets/vapid/key.pem")
        #expect(f["apps.example-live.fcm.serviceAccount"] == "/secrets/fcm/account.json")
        #expect(f["apps.example-live.webhook.secretFile"] == "/secrets/hook/secret")
        // A relative path in a variable is the working directory's, as on a command line.
        #expect(f["apps.example-live.userSecretFile"] == "/run/pod/user.secret")
        #expect(f["apps.legacy.auth.p12"] == "/secrets/legacy/client.p12")
        #expect(f["apps.legacy.auth.passwordFile"] == "/secrets/legacy/password")
        // The rest of the file is unchanged, and what was set is reported by variable and key.
        #expect(config.apps["example-live"]?.apns?.topic == "com.example.app")
        #expect(config.environmentOverrides.map(\.variable).contains("PUSHCTL_APP_LEGACY_APNS_P12"))
        #expect(config.environmentOverrides.first { $0.variable == "PUSHCTL_ADMIN_PORT" }?.key == "server.admin.port")
        #expect(config.environmentOverrides.count == 15)
        // The file's own relative paths stay relative to the file.
        let plain = try load([:])
        #expect(files(plain)["apps.example-live.apns.auth.p8"] == "/etc/pushprovider/k.p8" && plain.environmentOverrides.isEmpty)
        #expect(plain.database == "postgres://push@db.example.internal/push" && plain.databasePasswordEnv == "PUSHCTL_DB_SECRET_SOURCE")
        // A SQLite path in the variable is the working directory's when relative.
        #expect(try load(["PUSHCTL_DATABASE": "registry.sqlite"],
                         file: Self.file.replacingOccurrences(of: #""databasePasswordEnv": "PUSHCTL_DB_SECRET_SOURCE","#, with: "")).database
                == "/run/pod/registry.sqlite")
    }

    @Test func aSecretGivenByValueIsRefusedNamingTheFileFormAndNeverEchoed() throws {
        let value = "hunter2-very-secret"
        for (variable, fileForm) in [
            ("PUSHCTL_DATABASE_PASSWORD", "PUSHCTL_DATABASE_PASSWORD_FILE"),
            ("PUSHCTL_APP_LEGACY_APNS_PASSWORD", "PUSHCTL_APP_LEGACY_APNS_PASSWORD_FILE"),
            ("PUSHCTL_APP_EXAMPLE_LIVE_WEBHOOK_SECRET", "PUSHCTL_APP_EXAMPLE_LIVE_WEBHOOK_SECRET_FILE"),
            ("PUSHCTL_PROXY_CREDENTIALS", "PUSHCTL_PROXY_CREDENTIALS_FILE"),
        ] {
            do {
                _ = try load([variable: value])
                Issue.record("\(variable) was accepted")
            } catch {
                #expect(error.message.contains(variable) && error.message.contains(fileForm), "\(error.message)")
                #expect(!error.message.contains(value))
            }
        }
        // A key pasted where its path goes is a secret too.
        let pem = "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg\n-----END PRIVATE KEY-----"
        do {
            _ = try load(["PUSHCTL_APP_EXAMPLE_LIVE_APNS_P8": pem])
            Issue.record("a PEM key was taken as a path")
        } catch {
            #expect(error.message.contains("not a path") && !error.message.contains("MIGHAgEA"), "\(error.message)")
        }
    }

    @Test func unknownVariablesAppsAndMissingBlocksAreRefusedByName() throws {
        func refusal(_ variables: [String: String], file: String = Self.file) -> String {
            do { _ = try load(variables, file: file); return "" } catch { return error.message }
        }
        #expect(refusal(["PUSHCTL_SERVER_PROT": "8080"]).contains("PUSHCTL_SERVER_PROT is not a configuration variable"))
        #expect(refusal(["PUSHCTL_APP_NOSUCH_APNS_P8": "/k.p8"]).contains("names no app"))
        #expect(refusal(["PUSHCTL_APP_LEGACY_APNS_P8": "/k.p8"]).contains("apps.legacy has APNs auth with a .p12"))
        #expect(refusal(["PUSHCTL_APP_LEGACY_WEBPUSH_VAPID_KEY": "/v.pem"]).contains("apps.legacy has no webpush block"))
        #expect(refusal(["PUSHCTL_SERVER_PORT": "eighty"]).contains("PUSHCTL_SERVER_PORT must be a port number"))
        #expect(!refusal(["PUSHCTL_SERVER_PORT": "eighty"]).contains("eighty"))
        #expect(refusal(["PUSHCTL_SERVER_HOST": ""]).contains("PUSHCTL_SERVER_HOST is empty"))
        // Two app ids with one environment name cannot be told apart.
        let twins = #"{"apps": {"a.b": {"fcm": {"serviceAccount": "x.json"}}, "a-b": {"fcm": {"serviceAccount": "y.json"}}}}"#
        #expect(refusal(["PUSHCTL_APP_A_B_FCM_SERVICE_ACCOUNT": "/z.json"], file: twins).contains("could name apps a-b and a.b"))
        // A variable the file names as a secret's source is the file's business, not an override.
        #expect(refusal(["PUSHCTL_DB_SECRET_SOURCE": "x"]) == "")
    }

    /// `doctor` loads each app of a file that fails to load on its own: the other apps' variables then name no app
    /// of that part, and are left alone.
    @Test func aLenientEnvironmentLeavesOtherAppsVariablesAlone() throws {
        var environment = ConfigurationEnvironment(["PUSHCTL_APP_NOSUCH_APNS_P8": "/k.p8"], workingDirectory: "/")
        environment.ignoresOtherApps = true
        let config = try PushConfiguration(
            json: Array(Self.file.utf8), baseDirectory: "/etc/pushprovider", zones: .foundation(), environment: environment)
        #expect(config.environmentOverrides.isEmpty)
    }
}
