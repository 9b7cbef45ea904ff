import PushSimulator
import ArgumentParser
import Foundation

/// `pushctl fcm`: Firebase Cloud Messaging tools. So far: a development service account.
struct FCMCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fcm",
        abstract: "FCM tools: make a development service account for the simulator.",
        subcommands: [Account.self])

    /// `pushctl fcm account …`.
    struct Account: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "account", abstract: "Google service accounts (the JSON file apps.ID.fcm.serviceAccount names).",
            subcommands: [New.self])
    }
}

extension FCMCommand.Account {
    /// `pushctl fcm account new --out FILE`.
    struct New: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "new",
            abstract: "Make a development service account: a new RSA key in Google's JSON format (mode 0600).",
            discussion: """
                For the built-in simulator only (apps.ID.fcm.endpoint simulator): pushctl serve's simulator trusts \
                the account of every app configured so, and grants it access tokens. Refuses to overwrite FILE. \
                Prints the account's client_email.
                """)

        @OptionGroup var logging: LogOptions
        @Option(name: .long, help: "The JSON file to create (must not exist).")
        var out: String

        @Option(name: .customLong("project-id"), help: "The Firebase project id the account sends for.")
        var projectId: String = "pushprovider-dev"

        func run() throws {
            let made: (account: SimulatorServiceAccount, json: String)
            do {
                made = try SimulatorServiceAccount.makeDevelopment(projectId: projectId, tokenURI: "https://127.0.0.1:2197/token")
            } catch {
                throw CLIError.usage(error.message)
            }
            try SimulatorCommand.createSecretFile(absolutePath(out), contents: made.json)
            print(made.account.clientEmail)
        }
    }
}
