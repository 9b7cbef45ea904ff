import ArgumentParser
import Foundation
import PushCore
import PushSecrets
import PushSender
import PushStore

/// Options every command that reads the configuration takes (and `--log-format`, which every command takes).
struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: "Configuration file (default: $PUSHCTL_CONFIG, else Config/pushctl.json, else /etc/pushprovider/pushctl.json).")
    var config: String?

    @OptionGroup var logging: LogOptions

    /// Where the Debian package puts the configuration: the default when the current directory has no
    /// `Config/pushctl.json`, so an operator on a server runs `pushctl …` without `--config`.
    static let installedConfigPath = "/etc/pushprovider/pushctl.json"

    /// The configuration file's absolute path, following the documented precedence: `--config`, else
    /// `$PUSHCTL_CONFIG`, else `Config/pushctl.json` in the current directory (a checkout), else the installed one.
    var configPath: String {
        if let path = config ?? ProcessInfo.processInfo.environment["PUSHCTL_CONFIG"] { return absolutePath(path) }
        let local = absolutePath("Config/pushctl.json")
        let fm = FileManager.default
        if !fm.fileExists(atPath: local) && fm.fileExists(atPath: Self.installedConfigPath) { return Self.installedConfigPath }
        return local
    }

    /// Loads and validates the configuration; any problem is a usage error (exit 2), including a secret file
    /// other users can read (``SecretFileLoader``).
    func loadConfiguration() throws -> PushConfiguration {
        let path = configPath
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CLIError.usage("cannot read configuration file \(path) (set --config or PUSHCTL_CONFIG)")
        }
        let base = (path as NSString).deletingLastPathComponent
        let configuration: PushConfiguration
        do {
            configuration = try PushConfiguration(json: data, baseDirectory: base, zones: SystemTimeZones.names, environment: .ofProcess)
        } catch {
            throw CLIError.usage("\(path): \(error.message)")
        }
        try Self.checkSecretFiles(of: configuration)
        try Self.checkServiceAccounts(of: configuration)
        return configuration
    }

    /// Refuses (exit 2) an FCM service-account file that is not one (not JSON, no `private_key`, `client_email` or
    /// `project_id`, a key that is not RSA), naming the key and the file, before anything is stored or sent. A file
    /// that does not exist is left to the sender, as for the other secret files.
    static func checkServiceAccounts(of configuration: PushConfiguration) throws {
        for (id, app) in configuration.apps.sorted(by: { $0.key < $1.key }) {
            guard let fcm = app.fcm, FileManager.default.fileExists(atPath: fcm.serviceAccount) else { continue }
            do { _ = try FCMServiceAccount(path: fcm.serviceAccount, configurationKey: "apps.\(id).fcm.serviceAccount") } catch {
                throw CLIError.usage("apps.\(id).fcm.serviceAccount: \(error.message)")
            }
        }
    }

    /// Refuses (exit 2) a configuration whose secret files the loader would refuse (other users may read one, it is
    /// not a regular file, it is too large, it cannot be opened), naming the key, the file and, for a mode, the chmod
    /// that fixes it: every command, also one that reads none of them. A file that does not exist is left to the code
    /// that reads it (docs/configuration.md, "Secret files"): a command that never needs it runs without it.
    static func checkSecretFiles(of configuration: PushConfiguration) throws {
        for file in configuration.secretFiles {
            do { try SecretFileLoader.check(file.path, name: file.key) } catch where error.kind == .missing {
                continue
            } catch {
                throw CLIError.usage(error.message)
            }
        }
    }
}

/// Makes `path` absolute against the current directory.
func absolutePath(_ path: String) -> String {
    if path.hasPrefix("/") { return path }
    return PushConfiguration.resolve(path, against: FileManager.default.currentDirectoryPath)
}

/// Writes one line to standard error.
func printError(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}
