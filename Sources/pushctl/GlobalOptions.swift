import ArgumentParser
import Foundation
import PushCore

/// Options every command that reads the configuration takes (and `--log-format`, which every command takes).
struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: "Configuration file (default: $PUSHCTL_CONFIG, else Config/pushctl.json).")
    var config: String?

    @OptionGroup var logging: LogOptions

    /// The configuration file's absolute path, following the documented precedence.
    var configPath: String {
        let path = config ?? ProcessInfo.processInfo.environment["PUSHCTL_CONFIG"] ?? "Config/pushctl.json"
        return absolutePath(path)
    }

    /// Loads and validates the configuration; any problem is a usage error (exit 2).
    func loadConfiguration() throws -> PushConfiguration {
        let path = configPath
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CLIError.usage("cannot read configuration file \(path) (set --config or PUSHCTL_CONFIG)")
        }
        let base = (path as NSString).deletingLastPathComponent
        do {
            return try PushConfiguration(json: data, baseDirectory: base)
        } catch {
            throw CLIError.usage("\(path): \(error.message)")
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
