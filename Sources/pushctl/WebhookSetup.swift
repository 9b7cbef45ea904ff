import Foundation
import Logging
import PushCore
import PushDelivery
import PushSender

/// The webhook dispatcher of `serve` and `worker` for the apps with `webhook` settings, or nil when none has.
enum WebhookSetup {
    /// Reads each webhook's secret now: a missing or unreadable secret is a configuration error (exit 2).
    static func dispatcher(
        config: PushConfiguration, apps: [String: AppSettings], store: any DeliveryStore, logger: Logger
    ) throws -> WebhookDispatcher? {
        var clients: [String: WebhookClient] = [:]
        for (id, app) in apps.sorted(by: { $0.key < $1.key }) {
            guard let settings = app.webhook else { continue }
            do { clients[id] = try WebhookClient(settings) } catch {
                throw CLIError.usage("apps.\(id).webhook: \(error.message)")
            }
        }
        guard !clients.isEmpty else { return nil }
        logger.info("webhooks for \(clients.keys.sorted().joined(separator: ", "))")
        return WebhookDispatcher(store: store, clients: clients, logger: logger)
    }

    /// Reads each app's `userSecret` now (the key `userAuth` proofs are checked under): a missing or unreadable
    /// secret is a configuration error (exit 2), found at start rather than at the first registration.
    static func userSecrets(config: PushConfiguration) throws -> [String: [UInt8]] {
        var secrets: [String: [UInt8]] = [:]
        for (id, app) in config.apps {
            guard let source = app.userSecret else { continue }
            do {
                let secret = try CredentialsLoader.password(from: source, environment: ProcessInfo.processInfo.environment)
                guard !secret.isEmpty else { throw CLIError.usage("apps.\(id).userSecret is empty") }
                secrets[id] = Array(secret.utf8)
            } catch let error as CredentialError {
                throw CLIError.usage("apps.\(id).userSecret: \(error.message)")
            }
        }
        return secrets
    }
}
