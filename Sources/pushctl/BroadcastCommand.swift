import ArgumentParser
import Foundation
import PushCore
import PushStore

/// `pushctl broadcast`: one notification to every registered device of an app (or a channel).
struct BroadcastCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "broadcast",
        abstract: "Send one notification to every registered device (or a channel); safe to run from cron.",
        discussion: """
            With --id the broadcast is idempotent: a completed id is not sent again (except devices it deferred), an \
            interrupted one resumes with the same apns-ids, sending only to devices without an outcome. The devices \
            are split into shards (shardSize); this command works on them alongside any `pushctl worker` (or a \
            second run of the same id, which joins a running one and says whom it waits for) and returns when every \
            shard is finished by anyone; with --detach it only starts the broadcast for the workers. --rate is the \
            whole broadcast's rate, stored with it and kept by every process working on it. Exit status: 0 completed; 1 completed with deferred or rejected \
            devices, or the pruning breaker tripped; 2 invalid input; 3 interrupted: credentials refused; \
            5 interrupted: APNs unreachable longer than the outage limit, or the database unavailable; 130/143 \
            interrupted by SIGINT/SIGTERM; 1 also when it was cancelled (`pushctl jobs cancel`). Interrupted runs \
            resume with the same command. With --at TIME (RFC 3339 or epoch seconds) it is only stored: `pushctl \
            serve` or `pushctl worker` starts it at TIME.
            """)

    @OptionGroup var global: GlobalOptions
    @Option(help: "The app to broadcast for.") var app: String
    @OptionGroup var payload: PayloadOptions
    @Option(help: "Only devices in this channel.") var channel: String?
    @OptionGroup var audienceOptions: AudienceOptions
    @Option(help: "Only devices in this environment (development or production).") var environment: String?
    @Option(help: "Broadcast id; the same id resumes, a completed id is not sent again.") var id: String?
    @Option(help: "At most N notifications per second over the whole broadcast: stored with it, kept by every process working on it (workers, another run of this id).")
    var rate: Double?
    @Option(name: .customLong("outage-limit"), help: "Seconds APNs may stay unreachable before the run stops as interrupted (default: the app's outageLimitSeconds, else 600).")
    var outageLimit: Int?
    @Flag(name: .customLong("dry-run"), help: "Show the payload and the number of devices; send nothing.") var dryRun = false
    @Flag(help: "Print the summary as JSON.") var json = false
    @Flag(help: "Start the broadcast for `pushctl worker` processes, print its id and exit.") var detach = false
    @Option(help: "Start it at this time (RFC 3339, e.g. 2026-12-01T08:00:00Z, or epoch seconds): store it, print its id and exit; `pushctl serve` or `pushctl worker` starts it then.")
    var at: String?
    @Option(name: .customLong("local-time"), help: "Send at this wall-clock time (HH:MM) in each device's own zone: stored as one job with a wave per UTC offset, started by `pushctl serve` or `pushctl worker`.")
    var localTime: String?
    @Option(help: "With --local-time: on this date (YYYY-MM-DD); default: each zone's next occurrence.") var on: String?
    @Flag(name: .customLong("skip-past"), help: "With --local-time --on: drop waves whose time has passed (default: send them at once).")
    var skipPast = false

    func run() async throws {
        let config = try global.loadConfiguration()
        var settings: AppSettings
        do { settings = try config.app(app) } catch { throw CLIError.usage(error.message) }
        if let outageLimit {
            guard AppSettings.outageLimitRange.contains(outageLimit) else {
                throw CLIError.usage("--outage-limit must be between 1 and 86400 seconds")
            }
            settings.outageLimitSeconds = outageLimit
        }
        let (prepared, variants) = try payload.prepareLocalized(appLimit: settings.apns?.payloadLimit)
        let env = try environment.map { (text) throws -> APNsEnvironment in
            guard let e = APNsEnvironment(rawValue: text) else { throw CLIError.usage("--environment must be development or production") }
            return e
        }
        if let rate, rate <= 0 { throw CLIError.usage("--rate must be a positive number") }
        let audience = try audienceOptions.audience()
        if localTime == nil && (on != nil || skipPast) { throw CLIError.usage("--on and --skip-past go with --local-time") }
        if localTime != nil && at != nil { throw CLIError.usage("give --at or --local-time, not both") }
        let spec = try localTime.map { (text) throws -> LocalTimeSpec in
            do throws(FieldError) { return try LocalTimeSpec.parse(time: text, date: on, skipPast: skipPast) } catch {
                throw CLIError.usage("--local-time: \(error.message)")
            }
        }
        if spec != nil, rate != nil || outageLimit != nil || detach {
            throw CLIError.usage("--local-time stores the job for `pushctl serve` or `pushctl worker`; --rate, --outage-limit and --detach apply to a broadcast run now")
        }
        if at != nil {
            if rate != nil || outageLimit != nil || detach {
                throw CLIError.usage("--at stores the broadcast for `pushctl serve` or `pushctl worker`; --rate, --outage-limit and --detach apply to a broadcast run now")
            }
        }
        if let id, !PushConfiguration.isValidAppId(id) {
            throw CLIError.usage("--id must be 1-64 characters of A-Z a-z 0-9 . _ -")
        }
        // Outcomes are written in token order: a small writer cache is enough and keeps the process small.
        let options = RegistryOptions(writerCacheKiB: RegistryOptions.broadcastWriterCacheKiB, keepsSmallWALOnClose: true)
        let registry = try RegistryStores.openForCommand(config, options: options)
        let broadcastId = id ?? Self.generatedId()
        var wanted = BroadcastRecord(
            id: broadcastId, app: app, payload: prepared.payload, pushType: prepared.pushType,
            priority: prepared.priority, expiration: prepared.expiration, collapseId: prepared.collapseId,
            channel: channel, environment: env)
        let targeting = JobTargeting(audience: audience, variants: variants)
        wanted.targeting = targeting.isEmpty ? nil : targeting
        let now = try await registry.run { try $0.clockMs() }
        if let at { wanted.scheduledMs = try ScheduleOption.parse(at, now: now) }
        if dryRun {
            let count: Int
            // A channel narrows an audience like any clause.
            let counted = audience.map { audience in
                channel.map { Audience(audience.clauses + [AudienceClause(field: .channel, test: .equals(.string($0)))]) } ?? audience
            }
            do throws(StoreError) {
                count = try await registry.run { (store) throws -> Int in
                    if let counted { return try store.countAudience(app: app, environment: env, audience: counted) }
                    return try store.count(app: app, channel: channel, environment: env)
                }
            } catch {
                throw CLIError.usage(error.message)
            }
            // Each service the app has, as its sender maps the notification: APNs' payload and headers (the lines
            // before Web Push and FCM existed, unchanged), then what a browser and an Android device would get.
            var shown = prepared
            shown.collapseId = wanted.effectiveCollapseId
            if let apns = settings.apns {
                print(prepared.payloadString)
                print("apns-push-type: \(prepared.pushType.rawValue)")
                print("apns-priority: \(prepared.priority.rawValue)")
                print("apns-topic: \(prepared.topic(for: apns.topic))")
                print("apns-collapse-id: \(wanted.effectiveCollapseId)")
                for (locale, payload) in variants.sorted(by: { $0.key < $1.key }) {
                    print("locale \(locale): \(String(decoding: payload, as: UTF8.self))")
                }
            }
            let nowMs = now
            let services: ([UInt8]) -> [(String, JSONValue)] = { body in
                var fields: [(String, JSONValue)] = []
                if let web = settings.webPush {
                    fields.append(("webPush", ServicePreview.webPush(body, prepared: shown, declarative: web.declarative)))
                }
                if settings.fcm != nil { fields.append(("fcm", ServicePreview.fcm(body, prepared: shown, nowMs: nowMs))) }
                if let hms = settings.hms {
                    fields.append(("hms", ServicePreview.hms(body, prepared: shown, settings: hms, nowMs: nowMs)))
                }
                if let harmonyos = settings.harmonyos {
                    fields.append(("harmonyos", ServicePreview.harmonyos(body, prepared: shown, settings: harmonyos, nowMs: nowMs)))
                }
                if settings.unifiedPush != nil { fields.append(("unifiedPush", ServicePreview.unifiedPush(body, prepared: shown))) }
                return fields
            }
            for line in ServicePreview.lines(services: services, payload: prepared.payload, variants: variants) { print(line) }
            print("devices: \(count)")
            if let at = wanted.scheduledMs { print("at: \(Timestamp.rfc3339(ms: at))") }
            return
        }
        if let spec {
            try ScheduleOption.storeLocalTime(wanted, spec: spec, defaultZone: settings.effectiveDefaultTimeZone, in: registry, now: now)
            return
        }
        if wanted.scheduledMs != nil {
            try ScheduleOption.store(wanted, tokens: nil, in: registry, now: now)
            return
        }
        let execution = BroadcastExecution(app: app, json: json)
        let asked = wanted
        let lookup = try await registry.run { store in
            try BroadcastExecution.decide(id: broadcastId, app: app, wanted: asked, registry: store)
        }
        if let lookup {
            if case .refuse(let refusal) = lookup.decision { throw CLIError(code: refusal.exitCode, message: refusal.message) }
            guard let existing = lookup.existing, try execution.act(on: lookup.decision, existing, registry: registry, summary: !detach) else {
                if detach { print(broadcastId) }
                return
            }
        } else {
            let record = wanted
            try await registry.run { try $0.createBroadcast(record, tokens: nil) }
            if id == nil && !detach { printError("broadcast id: \(broadcastId)") }
        }
        if let rate {
            // Stored with the broadcast: every process working on it (workers, another run of this id) keeps to it.
            do throws(StoreError) { try await registry.run { try $0.setRate(id: broadcastId, perSecond: rate) } } catch {
                throw CLIError(code: 5, message: "cannot store the rate of broadcast \(broadcastId): \(error.message)")
            }
        }
        if detach {
            do {
                let shardSize = config.shardSize
                let (record, shards) = try await registry.run { store in
                    (try store.startBroadcast(id: broadcastId, shardSize: shardSize, newRound: true), try store.shards(id: broadcastId).count)
                }
                printError("broadcast \(broadcastId) started for the workers: \(record.total) devices in \(shards) shards")
            } catch {
                throw CLIError(code: 5, message: "cannot start broadcast \(broadcastId): \(error.message)")
            }
            print(broadcastId)
            return
        }
        try await execution.run(id: broadcastId, config: config, settings: settings, registry: registry)
    }

    static func generatedId() -> String {
        let f = DateFormatter()
        f.dateFormat = "yyyyMMdd-HHmmss"
        f.timeZone = TimeZone(identifier: "UTC")
        return "bc-\(f.string(from: Date()))-\(String(UInt16.random(in: 0...UInt16.max), radix: 16))"
    }
}
