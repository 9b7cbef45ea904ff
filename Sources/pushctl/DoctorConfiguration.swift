import Foundation
import PushCore
import PushStore

/// What `pushctl doctor` could load of the configuration, and its `configuration` check. Every other command refuses
/// a file that does not load; doctor reports why and still checks what it can: the apps that load on their own
/// (each decoded with the file's other top-level keys), their services and the database. A secret file another user
/// can read fails the configuration check, and the service that reads it fails its own check naming it.
struct DoctorConfiguration {
    var configuration: PushConfiguration?
    var check: DoctorCommand.Check

    static func load(_ global: GlobalOptions) -> DoctorConfiguration {
        let path = global.configPath
        guard let data = FileManager.default.contents(atPath: path) else {
            return DoctorConfiguration(check: .init(
                name: "configuration", status: .fail,
                detail: "cannot read configuration file \(path) (set --config or PUSHCTL_CONFIG)"))
        }
        let base = (path as NSString).deletingLastPathComponent
        do {
            let config = try PushConfiguration(json: data, baseDirectory: base, zones: SystemTimeZones.names, environment: .ofProcess)
            do {
                try GlobalOptions.checkSecretFiles(of: config)
                try GlobalOptions.checkServiceAccounts(of: config)
            } catch let error as CLIError {
                return DoctorConfiguration(
                    configuration: config,
                    check: .init(name: "configuration", status: .fail, detail: "\(path): \(error.message)"))
            } catch {
                return DoctorConfiguration(
                    configuration: config, check: .init(name: "configuration", status: .fail, detail: "\(path): \(error)"))
            }
            return DoctorConfiguration(
                configuration: config,
                check: .init(
                    name: "configuration", status: .ok,
                    detail: "\(path): \(config.apps.count) apps; no unknown keys; secret files readable by no other user"
                        + Self.fromEnvironment(config)))
        } catch {
            let message = (error as? ConfigurationError)?.message ?? "\(error)"
            let (partial, loaded) = Self.appsAlone(data, base: base)
            let rest = partial == nil
                ? "" : "; checking the apps that load on their own (\(loaded.joined(separator: ", ")))"
            return DoctorConfiguration(
                configuration: partial,
                check: .init(name: "configuration", status: .fail, detail: "\(path): \(message)\(rest)"))
        }
    }

    /// The configuration of the apps that decode alone (each with the file's other top-level keys), or nil when none
    /// does (the file is not JSON, or a top-level key is wrong).
    static func appsAlone(_ data: Data, base: String) -> (PushConfiguration?, [String]) {
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let apps = object["apps"] as? [String: Any]
        else { return (nil, []) }
        var merged: PushConfiguration?
        var loaded: [String] = []
        for (id, app) in apps.sorted(by: { $0.key < $1.key }) {
            var alone = object
            alone["apps"] = [id: app]
            var environment = ConfigurationEnvironment.ofProcess
            environment.ignoresOtherApps = true
            guard let bytes = try? JSONSerialization.data(withJSONObject: alone),
                let config = try? PushConfiguration(json: bytes, baseDirectory: base, zones: SystemTimeZones.names, environment: environment),
                let settings = config.apps[id]
            else { continue }
            if merged == nil { merged = config } else { merged?.apps[id] = settings }
            loaded.append(id)
        }
        return (merged, loaded)
    }

    /// What the environment set over the file, by variable and key (never a value).
    static func fromEnvironment(_ config: PushConfiguration) -> String {
        guard !config.environmentOverrides.isEmpty else { return "" }
        return "; from the environment: " + config.environmentOverrides.map { "\($0.variable) (\($0.key))" }.joined(separator: ", ")
    }
}
