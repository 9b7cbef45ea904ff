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
            Targets: --token (repeatable), --tokens-file (one token per line), --channel, or --all registered \
            devices of the app. Prints one line per token (masked token, status, reason, apns-id) once its outcome \
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
        let selectors = [!tokens.isEmpty, tokensFile != nil, channel != nil, all].filter { $0 }.count
        guard selectors == 1 else {
            throw CLIError.usage("choose exactly one target: --token, --tokens-file, --channel or --all")
        }
        if let outageLimit {
            guard AppSettings.outageLimitRange.contains(outageLimit) else {
                throw CLIError.usage("--outage-limit must be between 1 and 86400 seconds")
            }
            appSettings.outageLimitSeconds = outageLimit
        }
        if let channel, let problem = Registry.channelNameProblem(channel) { throw CLIError.usage("--channel: \(problem)") }
        let prepared = try payload.prepare(appLimit: appSettings.payloadLimit)
        let explicit = try explicitTokens()
        if id != nil && at == nil { throw CLIError.usage("--id is for scheduled sends; add --at") }
        if let id, !PushConfiguration.isValidAppId(id) { throw CLIError.usage("--id must be 1-64 characters of A-Z a-z 0-9 . _ -") }
        if at != nil && outageLimit != nil {
            throw CLIError.usage("--outage-limit applies to a send made now; a scheduled job uses the app's outageLimitSeconds")
        }

        let registry: any RegistryStore
        do { registry = try RegistryStores.open(config) } catch {
            throw CLIError.usage("cannot open the registry \(config.database): \(error)")
        }
        if let at {
            let now = try registry.clockMs()
            var record = BroadcastRecord(
                id: id ?? "job-" + APNsID.random(), app: app, payload: prepared.payload, pushType: prepared.pushType,
                priority: prepared.priority, expiration: prepared.expiration, collapseId: prepared.collapseId,
                channel: channel)
            record.scheduledMs = try ScheduleOption.parse(at, now: now)
            try ScheduleOption.store(record, tokens: explicit, in: registry, now: now)
            return
        }
        let sender = try SenderFactory.make(
            config: config, settings: appSettings, breakers: (try? registry.breakerStates(app: app)) ?? [:])

        var engine = BroadcastConfiguration()
        engine.storeOutageLimitMs = config.databaseOutageLimitSeconds * 1000
        engine.webhookApps = Set(config.apps.filter { $0.value.webhook != nil }.keys)
        let output = ResultPrinter(json: json)
        let bundleId = appSettings.topic
        let stop = StopFlag()
        let signals = SignalWatcher { stop.raise(signal: $0) }
        defer { signals.cancel() }
        let targets: SendRun.Targets = explicit.map { .tokens($0) } ?? .registered(channel: channel)
        let reason = await SendRun(store: registry.deliveryStore, app: app, configuration: engine, logger: Logger(label: "pushctl.send"))
            .run(
                targets, sender: sender, stop: stop,
                makeRequest: { prepared.request(token: $0, bundleId: bundleId) },
                onCommitted: { for r in $0 { output.print(r) } },
                onUnrecorded: { for r in $0 { output.print(r, note: "not recorded: the database is unavailable") } })
        let breakers = sender.breakerStates
        try? registry.saveBreakerStates(app: app, breakers)
        await sender.shutdown()
        output.flush()
        let counts = output.counts
        for endpoint in sender.summary.breakerTripped {
            printError("pushctl: pruning breaker tripped for \(endpoint): too many BadDeviceToken answers (sandbox/production mix-up?); those tokens were kept")
        }
        switch reason {
        case .signal(let n)?:
            throw CLIError(code: n == SIGTERM ? 143 : 130, message: "interrupted: \(counts.unsent) notifications not sent")
        case .endpoint(let endpointStop)? where endpointStop.kind == .credentials:
            throw CLIError(code: 3, message: "\(endpointStop.message); \(counts.unsent) notifications not sent")
        case .endpoint(let endpointStop)?:
            throw CLIError(code: 5, message: "\(endpointStop.message); \(counts.unsent) notifications not sent")
        case .store(let message)?:
            throw CLIError(code: 5, message: "the database is unavailable: \(message)")
        case .leaseLost?, nil:
            break
        }
        if counts.total == 0 { throw CLIError(code: 1, message: "no devices matched") }
        if counts.accepted == counts.total && sender.summary.breakerTripped.isEmpty { return }
        throw CLIError(
            code: 1,
            message: "\(counts.accepted) of \(counts.total) accepted (\(counts.dead) dead tokens, \(counts.rejected) rejected, \(counts.deferred) deferred)")
    }

    /// Tokens from --token / --tokens-file, validated before anything is sent; nil for registry targets.
    private func explicitTokens() throws -> [DeviceToken]? {
        var texts = tokens
        if let tokensFile {
            let data: Data?
            if tokensFile == "-" { data = FileHandle.standardInput.readDataToEndOfFile() } else {
                data = FileManager.default.contents(atPath: tokensFile)
            }
            guard let data else { throw CLIError.usage("cannot read tokens file \(tokensFile)") }
            texts = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline)
                .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty && !$0.hasPrefix("#") }
        } else if texts.isEmpty {
            return nil
        }
        var result: [DeviceToken] = []
        for (i, text) in texts.enumerated() {
            do { result.append(try DeviceToken(parsing: text)) } catch {
                throw CLIError.usage("token \(i + 1): \(error)")
            }
        }
        guard !result.isEmpty else { throw CLIError.usage("no tokens given") }
        return result
    }
}

