import ArgumentParser
import Foundation
import PushCore
import PushStore

/// `pushctl tokens …`: the device registry from the command line.
struct TokensCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tokens",
        abstract: "Manage the device-token registry.",
        subcommands: [Add.self, Remove.self, List.self, Count.self, Import.self, Export.self, BenchRegister.self, BenchStream.self])
}

/// Options shared by every `tokens` subcommand.
struct TokensOptions: ParsableArguments {
    @OptionGroup var global: GlobalOptions

    @Option(name: .long, help: "App id from the configuration.")
    var app: String

    /// Loads the configuration, checks the app and opens the registry. Unknown app → exit 2.
    func open() throws -> (AppSettings, any RegistryStore) {
        let config = try global.loadConfiguration()
        let settings: AppSettings
        do { settings = try config.app(app) } catch { throw CLIError.usage(error.message) }
        return (settings, try cli { () throws(StoreError) in try RegistryStores.open(config, options: .command) })
    }
}

/// Runs a registry call, mapping store errors to exit codes: invalid input 2, anything else 1.
func cli<T>(_ body: () throws(StoreError) -> T) throws(CLIError) -> T {
    do { return try body() } catch {
        throw error.code == .invalidInput ? CLIError.usage(error.message) : CLIError(code: 1, message: error.message)
    }
}

/// Parses a token argument; a bad token is a usage error naming the argument.
func parseToken(_ text: String, _ what: String) throws(CLIError) -> DeviceToken {
    do { return try DeviceToken(parsing: text) } catch { throw CLIError.usage("\(what): \(error.description)") }
}

/// Parses `--environment`.
func parseEnvironment(_ text: String?) throws(CLIError) -> APNsEnvironment? {
    guard let text else { return nil }
    guard let environment = APNsEnvironment(rawValue: text) else {
        throw CLIError.usage("--environment must be development or production, not '\(text)'")
    }
    return environment
}

extension TokensCommand {
    /// `tokens add`.
    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add",
            abstract: "Register a token (replacing --old if given), like the app's registration POST.")
        @OptionGroup var options: TokensOptions
        @Argument(help: "The token: hex or Apple's <xxxxxxxx …> form.") var token: String
        @Option(name: .long, help: "The token it replaces; empty or (null) means none.") var old: String?
        @Option(name: .long, help: "A channel (repeatable); default: keep existing channels.") var channel: [String] = []
        @Option(name: .long, help: "development or production (default: from the app's endpoint).")
        var environment: String?

        func run() throws {
            let (settings, registry) = try options.open()
            let token = try parseToken(token, "token")
            let oldToken: DeviceToken?
            do { oldToken = try RegistrationRequest.parseOldToken(old) } catch {
                throw CLIError.usage("--old: \(error.description)")
            }
            let environment = try parseEnvironment(environment) ?? settings.defaultEnvironment
            let outcome = try cli { () throws(StoreError) in
                try registry.register(
                    app: options.app, token: token, oldToken: oldToken, channels: channel.isEmpty ? nil : channel,
                    environment: environment)
            }
            switch outcome {
            case .created: print("created \(token.hex)")
            case .updated: print("updated \(token.hex)")
            case .replaced(let old): print("replaced \(old.hex) with \(token.hex)")
            }
        }
    }

    /// `tokens remove`.
    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "remove", abstract: "Unregister a token.")
        @OptionGroup var options: TokensOptions
        @Argument(help: "The token.") var token: String

        func run() throws {
            let (_, registry) = try options.open()
            let token = try parseToken(token, "token")
            let removed = try cli { () throws(StoreError) in try registry.unregister(app: options.app, token: token) }
            print(removed ? "removed \(token.hex)" : "not registered: \(token.hex)")
        }
    }

    /// `tokens count`.
    struct Count: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "count", abstract: "Count registered tokens.")
        @OptionGroup var options: TokensOptions
        @Option(name: .long, help: "Only tokens in this channel.") var channel: String?
        @Option(name: .long, help: "Only development or production tokens.") var environment: String?
        @OptionGroup var audienceOptions: AudienceOptions

        func run() throws {
            let (_, registry) = try options.open()
            let environment = try parseEnvironment(environment)
            if var audience = try audienceOptions.audience() {
                if let channel { audience.clauses.append(AudienceClause(field: .channel, test: .equals(.string(channel)))) }
                print(try cli { () throws(StoreError) in
                    try registry.countAudience(app: options.app, environment: environment, audience: audience)
                })
                return
            }
            print(try cli { () throws(StoreError) in
                try registry.count(app: options.app, channel: channel, environment: environment)
            })
        }
    }
}
