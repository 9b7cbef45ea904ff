import ArgumentParser
import Foundation
import PushCore
import PushStore

/// `pushctl live-activity tokens …`: the Live Activity token registry from the command line.
struct LiveActivityTokensCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tokens",
        abstract: "Register, list and remove Live Activity tokens.",
        subcommands: [Register.self, List.self, Remove.self])

    /// Parses `--kind`.
    static func kind(_ text: String) throws(CLIError) -> LiveActivityTokenKind {
        guard let kind = LiveActivityTokenKind(rawValue: text) else {
            throw CLIError.usage("--kind must be push-to-start or update, not '\(text)'")
        }
        return kind
    }
}

extension LiveActivityTokensCommand {
    /// `live-activity tokens register`.
    struct Register: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "register",
            abstract: "Register a push-to-start token (--installation, --attributes-type) or an update token (--activity-id).")
        @OptionGroup var options: TokensOptions
        @Option(help: "push-to-start or update.") var kind: String
        @Argument(help: "The token: hex or Apple's <xxxxxxxx …> form.") var token: String
        @Option(help: "Push-to-start: the installation's id.") var installation: String?
        @Option(name: .customLong("attributes-type"), help: "Push-to-start: the ActivityAttributes type it starts.") var attributesType: String?
        @Option(name: .customLong("activity-id"), help: "Update: the activity's id.") var activityId: String?
        @Option(help: "Push-to-start: a registry channel (repeatable).") var channel: [String] = []
        @Option(help: "development or production (default: from the app's endpoint).") var environment: String?

        func run() throws {
            let (settings, registry) = try options.open()
            let request = LiveActivityRegistration(
                app: options.app, token: try parseToken(token, "token"), kind: try LiveActivityTokensCommand.kind(kind),
                environment: try parseEnvironment(environment) ?? settings.apnsForCommand(app: options.app).defaultEnvironment, installation: installation,
                attributesType: attributesType, activityId: activityId, channels: channel.isEmpty ? nil : channel)
            if let problem = request.problem { throw CLIError.usage(problem) }
            let outcome = try cli { () throws(StoreError) in try registry.registerLiveActivityToken(request) }
            switch outcome {
            case .created: print("created \(request.token.hex)")
            case .updated: print("updated \(request.token.hex)")
            case .replaced(let old): print("replaced \(old.hex) with \(request.token.hex)")
            }
        }
    }

    /// `live-activity tokens list`.
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List Live Activity tokens of one kind.")
        @OptionGroup var options: TokensOptions
        @Option(help: "push-to-start or update.") var kind: String
        @Option(name: .customLong("attributes-type"), help: "Only this attributes type.") var attributesType: String?
        @Option(name: .customLong("activity-id"), help: "Only this activity's tokens.") var activityId: String?
        @Option(help: "Only push-to-start tokens in this registry channel.") var channel: String?
        @Option(help: "Only this installation's tokens.") var installation: String?
        @Option(help: "Only development or production tokens.") var environment: String?
        @Flag(help: "JSON lines instead of text.") var json = false

        func run() throws {
            let (_, registry) = try options.open()
            let query = LiveActivityTokenQuery(
                app: options.app, kind: try LiveActivityTokensCommand.kind(kind), attributesType: attributesType,
                activityId: activityId, channel: channel, installation: installation, environment: try parseEnvironment(environment))
            let tokens = try cli { () throws(StoreError) in try registry.allLiveActivityTokens(query) }
            for t in tokens {
                if json {
                    var fields: [(String, JSONValue)] = [
                        ("token", .string(t.token.hex)), ("kind", .string(t.kind.rawValue)), ("environment", .string(t.environment.rawValue)),
                    ]
                    if let v = t.installation { fields.append(("installation", .string(v))) }
                    if let v = t.attributesType { fields.append(("attributesType", .string(v))) }
                    if let v = t.activityId { fields.append(("activityId", .string(v))) }
                    if t.kind == .pushToStart { fields.append(("channels", .array(t.channels.map { .string($0) }))) }
                    fields.append(("lastRegisteredAt", .string(Timestamp.rfc3339(ms: t.lastRegisteredMs))))
                    print(JSONValue.object(fields).encodedString)
                } else {
                    let owner = t.kind == .pushToStart
                        ? "installation \(t.installation ?? "-") \(t.attributesType ?? "-")"
                        : "activity \(t.activityId ?? "-")"
                    print("\(t.token.hex) \(t.environment.rawValue) \(owner)" + (t.channels.isEmpty ? "" : " channels \(t.channels.joined(separator: ","))"))
                }
            }
        }
    }

    /// `live-activity tokens remove`.
    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "remove", abstract: "Unregister a Live Activity token, or every update token of --activity-id.")
        @OptionGroup var options: TokensOptions
        @Argument(help: "The token (omit with --activity-id).") var token: String?
        @Option(name: .customLong("activity-id"), help: "Remove every update token of this activity (it ended).") var activityId: String?

        func run() throws {
            let (_, registry) = try options.open()
            switch (token, activityId) {
            case (let text?, nil):
                let token = try parseToken(text, "token")
                let removed = try cli { () throws(StoreError) in try registry.unregisterLiveActivityToken(app: options.app, token: token) }
                if !removed { throw CLIError(code: 1, message: "not registered: \(token.hex)") }
                print("removed \(token.hex)")
            case (nil, let activity?):
                let n = try cli { () throws(StoreError) in try registry.endActivity(app: options.app, activityId: activity) }
                print("removed \(n) update token\(n == 1 ? "" : "s") of activity \(activity)")
            default:
                throw CLIError.usage("give a token or --activity-id, not both")
            }
        }
    }
}
