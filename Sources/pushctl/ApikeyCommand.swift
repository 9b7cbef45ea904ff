import ArgumentParser
import PushCore
import PushServer

/// `pushctl apikey new`: make an API key for the HTTP API.
struct ApikeyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apikey", abstract: "Make API keys for the HTTP API.", subcommands: [New.self])

    struct New: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "new",
            abstract: "Print a new random key once, and the sha256: line to put in the config.",
            discussion: """
                The key itself is never stored: only its hash goes into apps.APP.registrationKeys or sendKeys.
                Registration keys may only register and unregister devices (safe inside an app); send keys
                may also count and send (keep them on servers). A running `pushctl serve` takes the key once
                it reloads its configuration: `systemctl reload pushprovider`, or `kill -HUP` its process.
                """)

        @OptionGroup var global: GlobalOptions
        @Option(help: "The app the key is for.") var app: String
        @Option(help: "registration or send.") var kind: String

        func run() throws {
            let config = try global.loadConfiguration()
            do { _ = try config.app(app) } catch { throw CLIError.usage(error.message) }
            guard let kind = APIKeyKind(rawValue: kind) else {
                throw CLIError.usage("--kind must be registration or send, not '\(kind)'")
            }
            let key = APIKeys.generate()
            let list = kind == .registration ? "registrationKeys" : "sendKeys"
            print("key: \(key)")
            print(APIKeys.hash(key))
            printError("Add \"\(APIKeys.hash(key))\" to apps.\(app).\(list) in \(global.configPath), then reload the server: "
                + "systemctl reload pushprovider (or kill -HUP <pid of pushctl serve>); the key is not shown again.")
        }
    }
}
