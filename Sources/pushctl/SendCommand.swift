import ArgumentParser
import Foundation
import Logging
import PushCore
import PushDelivery
import PushSender
import PushStore

/// `pushctl send`: one notification to each selected device, with Apple's retry and pruning rules.
struct SendCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Send a notification to devices now.",
        discussion: """
            Targets: --token (repeatable), --tokens-file (one token per line), --channel, --all registered \
            devices of the app, or an audience (--user U, --where CLAUSE repeated: docs/audiences.md); or --broadcast-channel ID with --payload holding a Live Activity update or end: one \
            request to APNs, which delivers it to every subscriber of that iOS 18 channel. Prints one line per token (masked token, status, reason, apns-id) once its outcome \
            is recorded, or JSON lines with --json. While APNs is unreachable the send waits and reconnects, up to \
            --outage-limit. Exit 0 all accepted; 1 some not accepted (dead, rejected, deferred after transient \
            failures) or the pruning breaker tripped; 2 invalid input or configuration (nothing sent); 3 \
            credentials refused (e.g. an expired certificate); 5 APNs unreachable longer than the outage limit, or \
            the database unavailable; 130/143 interrupted. With --at TIME (RFC 3339 or epoch seconds) nothing is sent \
            now: the send is stored as a job, its id printed, and `pushctl serve` or `pushctl worker` starts it at \
            TIME (`pushctl jobs list|cancel`).
            """)

    @OptionGroup var global: GlobalOptions
    @Option(help: "App id from the configuration.") var app: String
    @Option(name: .customLong("token"), help: "Device token (hex or <…> form); repeatable.") var tokens: [String] = []
    @Option(name: .customLong("tokens-file"), help: "File with one token per line (- for stdin).") var tokensFile: String?
    @Option(help: "Every registered device in this channel.") var channel: String?
    @Flag(help: "Every registered device of the app.") var all = false
    @OptionGroup var audienceOptions: AudienceOptions
    @Option(name: .customLong("broadcast-channel"), help: "An iOS 18 broadcast channel id: one Live Activity update or end (--payload with its aps keys) to every subscriber.")
    var broadcastChannel: String?
    @Option(help: "With --broadcast-channel: the channel's environment (default: from the app's endpoint).") var environment: String?
    @OptionGroup var payload: PayloadOptions
    @Option(name: .customLong("outage-limit"), help: "Seconds APNs may stay unreachable before giving up (default: the app's outageLimitSeconds, else 600).")
    var outageLimit: Int?
    @Flag(help: "JSON lines instead of text.") var json = false
    @Option(help: "Send at this time instead of now (RFC 3339, e.g. 2026-12-01T08:00:00Z, or epoch seconds): store it as a job for `pushctl serve` or `pushctl worker`.")
    var at: String?
    @Option(help: "With --at: the job's id (the same command again does not store it twice).") var id: String?

    func run() async throws {
        let config = try global.loadConfiguration()
        var appSettings: AppSettings
        do { appSettings = try config.app(app) } catch { throw CLIError.usage(error.message) }
        let selectors = [!tokens.isEmpty, tokensFile != nil, channel != nil, all, broadcastChannel != nil, audienceOptions.isGiven]
            .filter { $0 }.count
        guard selectors == 1 else {
            throw CLIError.usage("choose exactly one target: --token, --tokens-file, --channel, --all, --user/--where or --broadcast-channel")
        }
        let audience = try audienceOptions.audience()
        if let broadcastChannel {
            if at != nil || id != nil || outageLimit != nil {
                throw CLIError.usage("--broadcast-channel sends one request now; --at, --id and --outage-limit do not apply")
            }
            let prepared = try payload.prepareLiveActivity(appLimit: appSettings.apnsForCommand(app: app).payloadLimit, nowSeconds: Int64(Date().timeIntervalSince1970))
            try await ChannelBroadcast.send(
                config: config, app: app, settings: appSettings, channelId: broadcastChannel, prepared: prepared,
                environment: try parseEnvironment(environment), json: json)
            return
        }
        if environment != nil { throw CLIError.usage("--environment is for --broadcast-channel") }
        if let outageLimit {
            guard AppSettings.outageLimitRange.contains(outageLimit) else {
                throw CLIError.usage("--outage-limit must be between 1 and 86400 seconds")
            }
            appSettings.outageLimitSeconds = outageLimit
        }
        if let channel, let problem = ChannelNames.problem(channel) { throw CLIError.usage("--channel: \(problem)") }
        let (prepared, variants) = try payload.prepareLocalized(appLimit: appSettings.apns?.payloadLimit)
        if !variants.isEmpty && at == nil {
            // A send made now builds each request from its token alone; a stored job reads each device's locale.
            throw CLIError.usage("per-locale text (--alert-for, --title-for, --subtitle-for) is sent by a stored job: add --at, or use `pushctl broadcast`")
        }
        let explicit = try TokenList.read(tokens: tokens, file: tokensFile)
        if id != nil && at == nil { throw CLIError.usage("--id is for scheduled sends; add --at") }
        if let id, !PushConfiguration.isValidAppId(id) { throw CLIError.usage("--id must be 1-64 characters of A-Z a-z 0-9 . _ -") }
        if at != nil && outageLimit != nil {
            throw CLIError.usage("--outage-limit applies to a send made now; a scheduled job uses the app's outageLimitSeconds")
        }

        // A send made now decrypts its credentials while the registry opens.
        let credentials = at == nil ? SenderFactory.loadCredentials(appSettings) : nil
        let registry = try RegistryStores.openForCommand(config)
        if let at {
            let now = try await registry.run { try $0.clockMs() }
            var record = BroadcastRecord(
                id: id ?? "job-" + NotificationID.random(), app: app, payload: prepared.payload, pushType: prepared.pushType,
                priority: prepared.priority, expiration: prepared.expiration, collapseId: prepared.collapseId,
                channel: channel)
            let targeting = JobTargeting(audience: audience, variants: variants)
            record.targeting = targeting.isEmpty ? nil : targeting
            record.scheduledMs = try ScheduleOption.parse(at, now: now)
            try ScheduleOption.store(record, tokens: explicit, in: registry, now: now)
            return
        }
        var targets: SendRun.Targets = .registered(channel: channel)
        if let explicit { targets = .listed(try registry.listedTargets(app: app, tokens: explicit)) }
        // An audience is read first (a user's devices: one index range), then sent to as listed devices.
        if let audience { targets = .audience(try registry.audienceTargets(app: app, audience: audience, environment: nil), audience) }
        // Without APNs no request needs a topic (the APNs sender sets its own on a request without one).
        let bundleId = appSettings.apns?.topic ?? ""
        try await DeviceSend.run(
            config: config, app: app, settings: appSettings, registry: registry, targets: targets, json: json,
            credentials: credentials, makeRequest: { prepared.request(token: $0, bundleId: bundleId) })
    }
}
