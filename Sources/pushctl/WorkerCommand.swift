import ArgumentParser
import Foundation
import Logging
import PushCore
import PushDelivery
import PushSender
import PushStore

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
            """)

    @OptionGroup var global: GlobalOptions
    @Option(help: "Only these apps (comma-separated; default: every configured app).") var apps: String?
    @Option(help: "Shards worked on at once, each with its own APNs connection (1-64).") var concurrency = 1

    func run() async throws {
        let config = try global.loadConfiguration()
        guard (1...64).contains(concurrency) else { throw CLIError.usage("--concurrency must be between 1 and 64") }
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
        let logger = Logger(label: "pushctl.worker")
        let options = RegistryOptions(writerCacheKiB: RegistryOptions.broadcastWriterCacheKiB)
        let registry = try RegistryStores.openForCommand(config, options: options)
        let worker = Worker(
            store: registry.deliveryStore, topics: selected.mapValues(\.topic), configuration: BroadcastConfiguration(config),
            concurrency: concurrency, logger: logger
        ) { app, breakers in
            guard let settings = config.apps[app] else { throw CLIError.usage("unknown app \(app)") }
            return try Sender.forApp(settings, in: config, breakerStates: breakers, logger: logger)
        }
        let webhooks = try WebhookSetup.dispatcher(config: config, apps: selected, store: registry.deliveryStore, logger: logger)
        let stop = StopFlag()
        let signals = SignalWatcher { stop.raise(signal: $0) }
        defer { signals.cancel() }
        let retention = HistoryRetention(registry: registry, days: config.deliveryRetentionDays)
        let trimming = Task { await retention.run(logger: logger) }
        defer { trimming.cancel() }
        webhooks?.start()
        let report = await worker.run(stop: stop)
        await webhooks?.stop()
        printError("worker stopped: \(report.shardsFinished) shards finished, \(report.shardsReleased) given back, \(report.sent) notifications sent")
    }
}
