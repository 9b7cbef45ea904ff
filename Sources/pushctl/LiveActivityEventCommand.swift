import ArgumentParser
import Foundation
import PushCore
import PushDelivery
import PushSender
import PushStore

/// `pushctl live-activity start|update|end`.
enum LiveActivityEventCommand {
    /// `live-activity start`: a start event to push-to-start tokens.
    struct Start: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "start",
            abstract: "Start a Live Activity on devices through their push-to-start tokens.",
            discussion: """
                Targets: --token (repeatable) or --tokens-file, else the push-to-start tokens registered for \
                --attributes-type (all of them, or those in --channel), optionally of one --environment. Sent now \
                as `pushctl send` does (same exit codes); with --id, as a resumable job run by the broadcast engine \
                (as `pushctl broadcast --id`: the same command again resumes it); with --at, stored as a job for \
                `pushctl serve` or `pushctl worker`.
                """)
        @OptionGroup var global: GlobalOptions
        @Option(help: "App id from the configuration.") var app: String
        @Option(name: .customLong("attributes-type"), help: "attributes-type: the ActivityAttributes type to start.") var attributesType: String
        @Option(help: "attributes: a JSON object (the activity's static attributes).") var attributes: String
        @Flag(name: .customLong("input-push-token"), help: "Ask the new activity for an update token (input-push-token: 1).")
        var inputPushToken = false
        @Option(name: .customLong("input-push-channel"), help: "Subscribe the new activity to this broadcast channel (iOS 18).")
        var inputPushChannel: String?
        @Option(name: .customLong("token"), help: "A push-to-start token (repeatable).") var tokens: [String] = []
        @Option(name: .customLong("tokens-file"), help: "File with one push-to-start token per line (- for stdin).") var tokensFile: String?
        @Option(help: "Only push-to-start tokens in this registry channel.") var channel: String?
        @Option(help: "Only development or production tokens.") var environment: String?
        @OptionGroup var audienceOptions: AudienceOptions
        @OptionGroup var content: LiveActivityContentOptions
        @Option(help: "Run it as a resumable job with this id (the broadcast engine, as `pushctl broadcast`): the same command again resumes it.")
        var id: String?
        @Option(help: "Store it as a job started at this time (RFC 3339 or epoch seconds) by `pushctl serve` or `pushctl worker`.")
        var at: String?
        @Flag(help: "JSON lines instead of text (with --id: the summary as JSON).") var json = false

        func run() async throws {
            let config = try global.loadConfiguration()
            let settings: AppSettings
            do { settings = try config.app(app) } catch { throw CLIError.usage(error.message) }
            if let problem = settings.liveActivityProblem { throw CLIError.usage(problem) }
            if let id, !PushConfiguration.isValidAppId(id) { throw CLIError.usage("--id must be 1-64 characters of A-Z a-z 0-9 . _ -") }
            if (!tokens.isEmpty || tokensFile != nil) && (channel != nil || environment != nil) {
                throw CLIError.usage("--token/--tokens-file name the tokens; --channel and --environment select registered ones")
            }
            if !tokens.isEmpty && tokensFile != nil { throw CLIError.usage("give --token or --tokens-file, not both") }
            if audienceOptions.isGiven && (!tokens.isEmpty || tokensFile != nil || channel != nil) {
                throw CLIError.usage("--user/--where pick the installations whose push-to-start tokens get the start; not with --token, --tokens-file or --channel")
            }
            let audience = try audienceOptions.audience()
            var extra: [(String, JSONValue)] = [
                ("attributes-type", .string(attributesType)), ("attributes", try LiveActivityContentOptions.object(attributes, "--attributes")),
            ]
            if inputPushToken { extra.append(("input-push-token", .int(1))) }
            if let inputPushChannel { extra.append(("input-push-channel", .string(inputPushChannel))) }
            let prepared = try content.prepare(event: .start, extra: extra, appLimit: settings.apnsForCommand(app: app).payloadLimit)
            let environment = try parseEnvironment(environment)
            let registry = try RegistryStores.openForCommand(config)
            if let id, at == nil, let existing = try await registry.run({ try $0.broadcast(id: id) }) {
                // The stored job as stored: its tokens and payload (with the timestamp of its first run); run again
                // as `pushctl broadcast --id` runs a stored id (the same request: its own record).
                let execution = BroadcastExecution(app: app, json: json)
                let lookup = try await registry.run { store in
                    try BroadcastExecution.decide(id: id, app: app, wanted: existing, registry: store)
                }
                if let lookup, try execution.act(on: lookup.decision, existing, registry: registry) {
                    try await execution.run(id: id, config: config, settings: settings, registry: registry)
                }
                return
            }
            var targets = try TokenList.read(tokens: tokens, file: tokensFile)
            if let audience {
                // The audience's devices, then their installations' push-to-start tokens for the type.
                targets = try cli { () throws(StoreError) in
                    try registry.pushToStartTokens(app: app, attributesType: attributesType, audience: audience, environment: environment)
                }
            } else if targets == nil {
                let query = LiveActivityTokenQuery(
                    app: app, kind: .pushToStart, attributesType: attributesType, channel: channel, environment: environment)
                targets = try cli { () throws(StoreError) in try registry.allLiveActivityTokens(query) }.map(\.token)
            }
            guard let list = targets, !list.isEmpty else {
                throw CLIError(code: 1, message: "no push-to-start tokens registered for \(attributesType)\(channel.map { " in channel \($0)" } ?? "")")
            }
            if id != nil || at != nil {
                let now = try await registry.run { try $0.clockMs() }
                var record = BroadcastRecord(
                    id: id ?? "job-" + NotificationID.random(), app: app, payload: prepared.payload, pushType: prepared.pushType,
                    priority: prepared.priority, expiration: prepared.expiration, collapseId: prepared.collapseId)
                if let at {
                    record.scheduledMs = try ScheduleOption.parse(at, now: now)
                    try ScheduleOption.store(record, tokens: list, in: registry, now: now)
                    return
                }
                // The id is free of ordinary jobs (above); a local-time job under it is refused (cancelled: exit 1).
                let wanted = record
                if let lookup = try await registry.run({ store in
                    try BroadcastExecution.decide(id: wanted.id, app: app, wanted: wanted, registry: store)
                }), case .refuse(let refusal) = lookup.decision {
                    throw CLIError(code: refusal.exitCode, message: refusal.message)
                }
                try cli { () throws(StoreError) in try registry.createBroadcast(record, tokens: list) }
                try await BroadcastExecution(app: app, json: json)
                    .run(id: record.id, config: config, settings: settings, registry: registry)
                return
            }
            let bundleId = try settings.apnsForCommand(app: app).topic
            try await DeviceSend.run(
                config: config, app: app, settings: settings, registry: registry, targets: .tokens(list), json: json,
                makeRequest: { prepared.request(token: $0, bundleId: bundleId) })
        }
    }

    /// `live-activity update`: an update event to one activity's update token, or to a broadcast channel.
    struct Update: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "update",
            abstract: "Update a Live Activity (its update token, or every subscriber of a broadcast channel).")
        @OptionGroup var target: LiveActivityTarget
        @OptionGroup var content: LiveActivityContentOptions
        @Flag(help: "JSON lines instead of text.") var json = false

        func run() async throws {
            try await target.send(event: .update, content: content, extra: [], json: json)
        }
    }

    /// `live-activity end`: an end event; the activity's update tokens are removed once it is accepted.
    struct End: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "end",
            abstract: "End a Live Activity; its update tokens are removed from the registry once APNs accepts the end.")
        @OptionGroup var target: LiveActivityTarget
        @OptionGroup var content: LiveActivityContentOptions
        @Option(name: .customLong("dismissal-date"), help: "dismissal-date: when the ended activity leaves the Lock Screen (RFC 3339 or epoch seconds).")
        var dismissalDate: String?
        @Flag(help: "JSON lines instead of text.") var json = false

        func run() async throws {
            var extra: [(String, JSONValue)] = []
            if let dismissalDate { extra.append(("dismissal-date", .int(try LiveActivityContentOptions.seconds(dismissalDate, "--dismissal-date")))) }
            try await target.send(event: .end, content: content, extra: extra, json: json)
        }
    }
}

/// Where an update or end goes: one activity's update tokens, or a broadcast channel.
struct LiveActivityTarget: ParsableArguments {
    @OptionGroup var global: GlobalOptions
    @Option(help: "App id from the configuration.") var app: String
    @Option(name: .customLong("activity-id"), help: "The activity: its registered update token gets the event.") var activityId: String?
    @Option(name: .customLong("broadcast-channel"), help: "An iOS 18 broadcast channel id: every subscriber gets the event.")
    var broadcastChannel: String?
    @Option(help: "With --broadcast-channel: the channel's environment (default: from the app's endpoint).") var environment: String?

    func send(event: LiveActivityEvent, content: LiveActivityContentOptions, extra: [(String, JSONValue)], json: Bool) async throws {
        let config = try global.loadConfiguration()
        let settings: AppSettings
        do { settings = try config.app(app) } catch { throw CLIError.usage(error.message) }
        guard (activityId == nil) != (broadcastChannel == nil) else { throw CLIError.usage("give --activity-id or --broadcast-channel") }
        if activityId != nil && environment != nil { throw CLIError.usage("--environment is for --broadcast-channel") }
        let prepared = try content.prepare(event: event, extra: extra, appLimit: settings.apnsForCommand(app: app).payloadLimit)
        if let broadcastChannel {
            try await ChannelBroadcast.send(
                config: config, app: app, settings: settings, channelId: broadcastChannel, prepared: prepared,
                environment: try parseEnvironment(environment), json: json)
            return
        }
        let activity = activityId!
        if let problem = settings.liveActivityProblem { throw CLIError.usage(problem) }
        let registry = try RegistryStores.openForCommand(config)
        let query = LiveActivityTokenQuery(app: app, kind: .update, activityId: activity)
        let tokens = try cli { () throws(StoreError) in try registry.allLiveActivityTokens(query) }.map(\.token)
        guard !tokens.isEmpty else { throw CLIError(code: 1, message: "no update token registered for activity \(activity)") }
        let bundleId = try settings.apnsForCommand(app: app).topic
        try await DeviceSend.run(
            config: config, app: app, settings: settings, registry: registry, targets: .tokens(tokens), json: json,
            makeRequest: { prepared.request(token: $0, bundleId: bundleId) })
        if event == .end {
            // Every token accepted the end (a partial outcome threw above and keeps them for a retry).
            _ = try cli { () throws(StoreError) in try registry.endActivity(app: app, activityId: activity) }
        }
    }
}
