import PushSimulator
import ArgumentParser
import Foundation

/// `pushctl harmonyos`: Push Kit for HarmonyOS NEXT tools. So far: a development service-account key file.
struct HarmonyOSCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "harmonyos",
        abstract: "HarmonyOS Push Kit tools: make a development service-account key file for the simulator.",
        subcommands: [Account.self])

    /// `pushctl harmonyos account …`.
    struct Account: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "account", abstract: "Huawei service accounts (the key file apps.ID.harmonyos.serviceAccount names).",
            subcommands: [New.self])
    }
}

extension HarmonyOSCommand.Account {
    /// `pushctl harmonyos account new --out FILE`.
    struct New: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "new",
            abstract: "Make a development service-account key file: a new RSA key in Huawei's JSON format (mode 0600).",
            discussion: """
                For the built-in simulator only (apps.ID.harmonyos.endpoint simulator): pushctl serve's simulator \
                trusts the account of every app configured so, and accepts the JWTs it signs. Refuses to overwrite \
                FILE. Prints the account's sub_account.
                """)

        @OptionGroup var logging: LogOptions
        @Option(name: .long, help: "The JSON file to create (must not exist).")
        var out: String

        @Option(name: .customLong("project-id"), help: "The AppGallery Connect project ID the account sends for (apps.ID.harmonyos.projectId).")
        var projectId: String = "101234567890"

        func run() throws {
            let json: String
            do { json = try SimulatorHarmonyOSAccount.makeDevelopment(projectId: projectId) } catch {
                throw CLIError.usage(error.message)
            }
            try SimulatorCommand.createSecretFile(absolutePath(out), contents: json)
            let account = try? SimulatorHarmonyOSAccount(keyFileJSON: Array(json.utf8), source: out)
            print(account?.subAccount ?? "")
        }
    }
}
