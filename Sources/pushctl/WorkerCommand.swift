import ArgumentParser
import Foundation
import Logging
import PushCore
import PushDelivery
import PushSender
import PushServer
import PushStore
import ServiceLifecycle
import Synchronization

/// `pushctl worker`: works on shards of broadcasts and send jobs until SIGINT/SIGTERM.
struct WorkerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "worker",
        abstract: "Work on shards of any running broadcast or send job until SIGTERM.",
        discussion: """
            Claims shards of broadcasts started by `pushctl broadcast` (with or without --detach), the HTTP API or \
            cron, on this host or any other sharing the database, and sends them. Run several, on several hosts, \
            against one PostgreSQL database; on SQLite they share one host. A worker that dies holds its shards \
            for shardLeaseSeconds at most; then others take them over and resend only its in-flight window. On \
            SIGINT/SIGTERM it drains, gives its shards back and exits 0. Logs go to stderr. It also applies \
            deliveryRetentionDays at start and every hour (as `pushctl maintenance` does once).

            Reloads its configuration on SIGHUP (`systemctl reload pushprovider-worker@NAME`, `kill -HUP PID`) \
            without dropping a shard: apps added or changed (with --apps, the apps named) and renewed credentials \
            are used from each slot's next shard on; a shard in flight finishes on the old ones. A change to what it \
            built at start (the database, shard and history settings, webhooks) is refused with one log line naming \
            each such key, and the rest still applies; a configuration that does not load is refused whole.
            """)

    @OptionGroup var global: GlobalOptions
    @Option(help: "Only these apps (comma-separated; default: every configured app).") var apps: String?
    @Option(help: "Shards worked on at once, each with its own APNs connection (1-64).") var concurrency = 1

    func run() async throws {
        ReloadSignal.ignoreUntilReady()
        let config = try global.loadConfiguration()
        guard (1...64).contains(concurrency) else { throw CLIError.usage("--concurrency must be between 1 and 64") }
        let selected = try selectedApps(of: config)
        let logger = Logger(label: "pushctl.worker")
        let options = RegistryOptions(writerCacheKiB: RegistryOptions.broadcastWriterCacheKiB)
        let registry = try RegistryStores.openForCommand(config, options: options)
        // The configuration of the moment: a sender made after a reload uses the reloaded credentials.
        let running = RunningConfiguration(config)
        let worker = Worker(
            store: registry.deliveryStore, apps: Set(selected.keys), configuration: BroadcastConfiguration(config),
            concurrency: concurrency, logger: logger
        ) { app, breakers in
            let config = running.value
            guard let settings = config.apps[app] else { throw CLIError.usage("unknown app \(app)") }
            return try ServiceRouter.forApp(settings, in: config, breakerStates: breakers, logger: logger)
        }
        let webhooks = try WebhookSetup.dispatcher(config: config, apps: selected, store: registry.deliveryStore, logger: logger)
        // One start and one stop path, as in `pushctl serve`: the services start with the group; on SIGINT/SIGTERM
        // the worker drains first (the last service stops first), then the webhook dispatcher and retention.
        let stop = StopFlag()
        let finished = ReportBox()
        let retention = HistoryRetention(registry: registry, days: config.deliveryRetentionDays)
        var services: [any Service] = [LifecycleService.loop("retention") { await retention.run(logger: logger) }]
        if let webhooks {
            services.append(LifecycleService("webhooks", start: { webhooks.start() }, stop: { await webhooks.stop() }))
        }
        services.append(LifecycleService("worker", start: {
            let report = await worker.run(stop: stop)
            finished.value.withLock { $0 = report }
        }))
        let group = ServiceGroup(configuration: .init(services: services, logger: logger))
        let signals = SignalWatcher("pushctl worker", deadlineSeconds: SignalWatcher.stopDeadlineSeconds) { signal in
            stop.raise(signal: signal)
            Task { await group.triggerGracefulShutdown() }
        }
        defer { signals.cancel() }
        let reloads = ReloadSignal { [self] in reload(worker, running: running, logger: logger) }
        defer { reloads.cancel() }
        try await group.run()
        guard let report = finished.value.withLock({ $0 }) else { return }
        printError("worker stopped: \(report.shardsFinished) shards finished, \(report.shardsReleased) given back, \(report.sent) notifications sent")
    }
}

extension WorkerCommand {
    /// The apps this worker sends for: those `--apps` names, else every configured app.
    func selectedApps(of config: PushConfiguration) throws -> [String: AppSettings] {
        var selected = config.apps
        if let apps {
            let names = apps.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            guard !names.isEmpty else { throw CLIError.usage("--apps needs at least one app id") }
            for name in names where config.apps[name] == nil {
                throw CLIError.usage("unknown app '\(name)'; configured apps: \(config.apps.keys.sorted().joined(separator: ", "))")
            }
            selected = config.apps.filter { names.contains($0.key) }
        }
        guard !selected.isEmpty else { throw CLIError.usage("no apps configured") }
        return selected
    }

    /// SIGHUP: reads the configuration again; each slot uses it from its next shard (``Worker/reload(topics:)``).
    /// A file that does not load, or no longer has an app `--apps` names, is refused whole with one log line.
    func reload(_ worker: Worker, running: RunningConfiguration, logger: Logger) {
        let new: PushConfiguration, selected: [String: AppSettings]
        do {
            new = try global.loadConfiguration()
            selected = try selectedApps(of: new)
        } catch {
            let reason = (error as? CLIError)?.message ?? "\(error)"
            logger.error("configuration reload refused, the running configuration stays: \(reason)")
            return
        }
        let plan = ConfigurationReload(running: running.value, new: new, listening: false)
        if let line = plan.refusalLine { logger.warning("\(line)") }
        for (id, app) in selected.sorted(by: { $0.key < $1.key }) {
            guard let apns = app.apns else { continue }
            let status = PushServer.CredentialStatus.loading(apns)
            if let error = status.error, !status.loaded {
                logger.warning("app \(id): credentials not loaded: \(error)", metadata: ["app": "\(id)"])
            }
        }
        running.replace(with: plan.applied)
        worker.reload(apps: Set(selected.keys))
        logger.info("configuration reloaded from \(global.configPath): \(selected.count) apps (\(selected.keys.sorted().joined(separator: ", ")))")
    }
}

/// What the worker service reports, read once the group has stopped.
private final class ReportBox: Sendable {
    let value = Mutex<Worker.Report?>(nil)
}
