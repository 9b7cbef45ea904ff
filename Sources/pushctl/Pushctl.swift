import ArgumentParser
import Foundation
import PushCore

/// `pushctl`: the PushProvider command-line tool.
@main
struct Pushctl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pushctl",
        abstract: "PushProvider: a self-hosted push provider for APNs, Web Push and FCM.",
        discussion: "Configuration: --config FILE, else $PUSHCTL_CONFIG, else Config/pushctl.json, else /etc/pushprovider/pushctl.json.",
        subcommands: [
            PayloadCommand.self,
            TokensCommand.self,
            CertCommand.self,
            WebPushCommand.self,
            FCMCommand.self,
            HarmonyOSCommand.self,
            SimulatorCommand.self,
            SendCommand.self,
            BroadcastCommand.self,
            LiveActivityCommand.self,
            ChannelsCommand.self,
            JobsCommand.self,
            WorkerCommand.self,
            ServeCommand.self,
            ApikeyCommand.self,
            DeliveriesCommand.self,
            MaintenanceCommand.self,
            DoctorCommand.self,
        ])

    @Flag(help: "Print the version, the git commit it was built from and the libcurl, OpenSSL and SQLite it runs with.")
    var version = false

    /// `pushctl --version` prints ``VersionReport``; `pushctl` alone prints the help, as before.
    func run() throws {
        guard version else { throw CleanExit.helpRequest(self) }
        print(VersionReport.text())
    }

    /// Runs the command and maps every failure to the documented exit codes: usage and input errors exit 2
    /// with a one-line message; commands throw ``CLIError`` for their own codes.
    static func main() async {
        ExecutableImage.releaseRelocationTable()
        assert(unnamedCommands().isEmpty, "commands without an explicit commandName: \(unnamedCommands())")
        if let unknown = unknownSubcommand(Array(CommandLine.arguments.dropFirst())) {
            FileHandle.standardError.write(Data(("pushctl: " + unknown + "\n").utf8))
            Foundation.exit(2)
        }
        let command: ParsableCommand
        do {
            command = try parseAsRoot()
        } catch {
            let code = exitCode(for: error)
            let message = fullMessage(for: error)
            if code == .success {
                print(message)
                Foundation.exit(0)
            }
            FileHandle.standardError.write(Data(("pushctl: " + firstLine(message) + "\n").utf8))
            Foundation.exit(2)
        }
        await run(command)
    }

    /// Runs a parsed command and exits with its code, off the main actor: `main` is isolated to it, and returning
    /// there at the end would first need a thread to serve the main queue (`dispatch_main` parked the main
    /// thread), only to exit.
    nonisolated static func run(_ command: ParsableCommand) async -> Never {
        do {
            try LogOptions.bootstrap()
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                var syncCommand = command
                try syncCommand.run()
            }
            Foundation.exit(0)
        } catch let error as CLIError {
            if !error.message.isEmpty {
                FileHandle.standardError.write(Data(("pushctl: " + error.message + "\n").utf8))
            }
            Foundation.exit(error.code)
        } catch let error as ExitCode {
            Foundation.exit(error.rawValue)
        } catch let error as StoreError {
            // The database's own failure keeps its cause: refused input exits 2, a busy or unreachable database 5
            // (as a send or broadcast does), anything else 1.
            FileHandle.standardError.write(Data(("pushctl: " + error.message + "\n").utf8))
            switch error.kind {
            case .invalidInput: Foundation.exit(2)
            case .unavailable: Foundation.exit(5)
            default: Foundation.exit(1)
            }
        } catch {
            // `--help` arrives as a command whose run() throws a clean exit: print it in full.
            let message = fullMessage(for: error)
            if exitCode(for: error) == .success {
                print(message)
                Foundation.exit(0)
            }
            FileHandle.standardError.write(Data(("pushctl: " + firstLine(message) + "\n").utf8))
            Foundation.exit(2)
        }
    }

    /// Commands in the tree whose configuration does not name them. ArgumentParser then derives the name with
    /// `String(describing:)` of the type, a dynamic cast that scans every protocol conformance in this large
    /// binary: 20 unnamed commands cost a cold `pushctl send` about a fifth of its start-up CPU. Checked on every
    /// run of a debug build (the tests run one), compiled out of release builds.
    static func unnamedCommands(_ types: [ParsableCommand.Type] = [Pushctl.self], path: String = "") -> [String] {
        types.flatMap { type -> [String] in
            let name = type.configuration.commandName
            let here = path + "/" + (name ?? "\(type)")
            return (name == nil ? [here] : []) + unnamedCommands(type.configuration.subcommands, path: here)
        }
    }

    /// The one-line complaint for a subcommand name that is not one (`pushctl sned`, `pushctl tokens lst`), with the
    /// nearest name; nil when the words before the first option name commands. Without it ArgumentParser reads the
    /// misspelt word as an argument and complains about the first option after it (`Unknown option '--app'`).
    static func unknownSubcommand(_ arguments: [String], root: ParsableCommand.Type = Pushctl.self) -> String? {
        var command = root, path = root.configuration.commandName ?? "pushctl"
        for word in arguments {
            let subcommands = command.configuration.subcommands
            guard !word.hasPrefix("-"), !subcommands.isEmpty, command.configuration.defaultSubcommand == nil else { return nil }
            if word == "help" { return nil }
            if let next = subcommands.first(where: { ($0.configuration.commandName ?? "") == word || $0.configuration.aliases.contains(word) }) {
                command = next
                path += " " + word
                continue
            }
            let names = subcommands.compactMap { type -> String? in type.configuration.commandName }
            let nearest = names.map { ($0, editDistance(word, $0)) }.min { $0.1 < $1.1 }
            let hint = nearest.flatMap { $0.1 <= max(2, $0.0.count / 3) ? " (did you mean '\($0.0)'?)" : nil }
                ?? "; the commands are \(names.joined(separator: ", "))"
            return "unknown command '\(word)' for '\(path)'\(hint)"
        }
        return nil
    }

    /// Levenshtein distance (insertions, deletions, substitutions), for suggesting the nearest command name.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        guard !a.isEmpty else { return b.count }
        var row = Array(0...b.count)
        for i in 1...a.count {
            var previous = row[0]
            row[0] = i
            for j in stride(from: 1, through: b.count, by: 1) {
                let current = row[j]
                row[j] = min(row[j] + 1, row[j - 1] + 1, previous + (a[i - 1] == b[j - 1] ? 0 : 1))
                previous = current
            }
        }
        return row[b.count]
    }

    private static func firstLine(_ message: String) -> String {
        let trimmed = message.trimmingCharacters(in: .whitespacesAndNewlines)
        let line = trimmed.split(separator: "\n", maxSplits: 1).first.map(String.init) ?? trimmed
        return line.hasPrefix("Error: ") ? String(line.dropFirst(7)) : line
    }
}

/// A failure with a documented exit code and a one-line message for stderr.
struct CLIError: Error {
    /// The process exit code.
    let code: Int32
    /// One line, without the `pushctl:` prefix.
    let message: String

    /// Invalid input or configuration: exit 2, nothing done.
    static func usage(_ message: String) -> CLIError { CLIError(code: 2, message: message) }
}
