import Foundation
import Logging
import PushCore
import PushLanes
import PushServer
import Synchronization

extension ServeCommand {
    /// The configuration file with this run's command-line addresses applied (at start and at each reload, so a
    /// `--port` is not taken for a changed `server.port`).
    func loadConfiguration() throws -> PushConfiguration {
        var config = try global.loadConfiguration()
        if let host { config.server.host = host }
        if let port { config.server.port = port }
        if let adminHost { config.server.admin.host = adminHost }
        if let adminPort { config.server.admin.port = adminPort }
        return config
    }

    /// Each app's APNs credentials loaded now, with a warning for each that does not load (an app without APNs has
    /// none). Reading and decrypting
    /// credentials blocks: on the process's lane, not a cooperative thread.
    static func credentialStatuses(_ config: PushConfiguration, logger: Logger) async -> [String: PushServer.CredentialStatus] {
        var credentials: [String: PushServer.CredentialStatus] = [:]
        for (id, app) in config.apps.sorted(by: { $0.key < $1.key }) {
            guard let apns = app.apns else { continue }
            let status = await BlockingLane.shared.perform { PushServer.CredentialStatus.loading(apns) }
                ?? PushServer.CredentialStatus(loaded: false, kind: "unknown", error: "not loaded: too many blocking calls waiting")
            if let error = status.error, !status.loaded {
                logger.warning("app \(id): credentials not loaded: \(error)", metadata: ["app": "\(id)"])
            }
            credentials[id] = status
        }
        return credentials
    }

    /// Each app's Web Push, FCM, HMS and UnifiedPush health (``ServiceHealth``), loaded on the blocking lane; a
    /// service whose files do not load is logged once, as APNs' credentials are.
    static func serviceHealth(_ config: PushConfiguration, logger: Logger) async -> [String: [ServiceHealth]] {
        var health: [String: [ServiceHealth]] = [:]
        for (id, app) in config.apps.sorted(by: { $0.key < $1.key })
        where app.webPush != nil || app.fcm != nil || app.hms != nil || app.unifiedPush != nil {
            let statuses = await BlockingLane.shared.perform { ServiceHealth.loading(app: id, app) } ?? []
            for status in statuses where !status.loaded {
                logger.warning("app \(id): \(status.service.rawValue) credentials not loaded: \(status.error ?? "unknown")", metadata: ["app": "\(id)"])
            }
            health[id] = statuses
        }
        return health
    }

    /// The configured keys, plus this run's development key of each simulator app that still has no key.
    static func keys(_ config: PushConfiguration, devKeys: [String: String]) -> APIKeys {
        var keys = APIKeys(apps: config.apps)
        for (id, key) in devKeys where config.apps[id]?.sendsToSimulator(config.simulator) == true && !keys.hasKeys(for: id) {
            keys.add(key: key, app: id, kind: .send)
        }
        return keys
    }

    /// SIGHUP: reads the configuration file again and applies what may change live (``ConfigurationReload``).
    /// A file that does not load (syntax, validation, a secret file others can read, an unreadable user secret) is
    /// refused whole with one log line and the running configuration stays.
    func reload(_ server: PushServer, running: RunningConfiguration, devKeys: [String: String], logger: Logger) async {
        let path = global.configPath
        let new: PushConfiguration, userSecrets: [String: [UInt8]]
        do {
            new = try loadConfiguration()
            userSecrets = try WebhookSetup.userSecrets(config: new)
        } catch {
            let reason = (error as? CLIError)?.message ?? "\(error)"
            logger.error("configuration reload refused, the running configuration stays: \(reason)")
            return
        }
        let plan = ConfigurationReload(running: running.value, new: new)
        if let line = plan.refusalLine { logger.warning("\(line)") }
        let config = plan.applied
        let keys = Self.keys(config, devKeys: devKeys)
        let configured = APIKeys(apps: config.apps), before = APIKeys(apps: running.value.apps)
        for id in devKeys.keys.sorted() where configured.hasKeys(for: id) && !before.hasKeys(for: id) {
            // The printed key stops working without a word otherwise: say so, and when it leaves no send key at all.
            let sends = config.apps[id].map { !$0.sendKeys.isEmpty } ?? false
            let line = "app \(id): the development key printed at start no longer works: the app has keys of its own now"
                + (sends ? "" : " and none of them is a send key (add one to apps.\(id).sendKeys to send)")
            logger.warning("\(line)", metadata: ["app": "\(id)"])
        }
        await server.reload(
            configuration: config, keys: keys, credentials: await Self.credentialStatuses(config, logger: logger),
            userSecrets: userSecrets, services: await Self.serviceHealth(config, logger: logger))
        running.replace(with: config)
        logger.info("configuration reloaded from \(path): \(config.apps.count) apps")
    }
}
