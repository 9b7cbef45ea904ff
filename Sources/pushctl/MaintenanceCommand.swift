import ArgumentParser
import Foundation
import Logging
import PushCore
import PushDelivery
import PushStore

/// `pushctl maintenance`: one retention pass, for cron (`serve` and `worker` also apply it hourly).
struct MaintenanceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "maintenance",
        abstract: "Delete delivery history older than deliveryRetentionDays and post waiting webhook events (one pass, for cron).",
        discussion: """
            Deletes delivery-log and prune-log rows, and the per-device outcomes of completed broadcasts and send \
            jobs, older than the configuration's deliveryRetentionDays (default 30), in transactions of 10,000 rows. \
            Unfinished broadcasts keep everything they need to resume. Then, for apps with a webhook, posts the \
            events waiting in the outbox (what `serve` and `worker` do continuously; for deployments that only run \
            cron). Prints what it did; exit 0, 1 on a database error, 2 on a configuration error.
            """)

    @OptionGroup var global: GlobalOptions

    func run() throws {
        let config = try global.loadConfiguration()
        let registry = try cli { () throws(StoreError) in try RegistryStores.open(config, options: .command) }
        let retention = HistoryRetention(registry: registry, days: config.deliveryRetentionDays)
        let report = try cli { () throws(StoreError) in try retention.runOnce() }
        print("""
            maintenance: history before \(Timestamp.rfc3339(ms: report.cutoffMs, milliseconds: true)) (\(config.deliveryRetentionDays) days) deleted: \
            \(report.deliveries) delivery-log rows, \(report.prunes) prune-log rows, \(report.outcomes) outcomes and \
            \(report.jobTokens) job tokens of \(report.broadcasts) completed broadcasts
            """)
        let logger = Logger(label: "pushctl.maintenance")
        guard let webhooks = try WebhookSetup.dispatcher(config: config, apps: config.apps, store: registry.deliveryStore, logger: logger)
        else { return }
        for app in webhooks.apps {
            var delivered = 0
            while true {
                let n = webhooks.deliverBatch(app: app)
                if n == 0 { break }
                delivered += n
            }
            let waiting = (try? registry.deliveryStore.webhookBacklog(app: app)) ?? 0
            print("maintenance: webhook of \(app): \(delivered) events delivered, \(waiting) waiting")
        }
    }
}
