import ArgumentParser
import Foundation
import Logging
import PushCore
import PushLanes
import PushSender
import PushServer
import PushStore
import Synchronization

/// `pushctl serve`: the HTTP API, plus the built-in simulator for apps whose endpoint is `simulator`.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the HTTP API (and the built-in simulator of APNs, Web Push and FCM for the apps that send to it).",
        discussion: """
            Stops gracefully on SIGTERM/SIGINT: stops accepting, finishes requests, commits queued work.

            Reloads its configuration on SIGHUP (`systemctl reload pushprovider`, `kill -HUP PID`) without dropping \
            a request: API keys, apps added or changed, renewed credentials (new connections use them; transfers \
            in flight finish on the old ones), user secrets. What it bound or built at start cannot change live \
            (listen addresses, the database, the built-in simulator, rate limits, shard and history settings, \
            webhooks): a change to one of those is refused with one log line naming each such key, and the rest \
            still applies. A configuration that does not load is refused whole with one log line; the running one \
            stays.
            """)

    @OptionGroup var global: GlobalOptions
    @Option(help: "Listen on this host instead of the config's server.host.") var host: String?
    @Option(help: "Listen on this port instead of the config's server.port.") var port: Int?
    @Option(help: "The admin listener's host instead of the config's server.admin.host.") var adminHost: String?
    @Option(help: "The admin listener's port instead of the config's server.admin.port (the public address: one listener).")
    var adminPort: Int?
    @Option(
        name: .customLong("simulator-record"),
        help: "With the built-in simulator: append every notification it accepts to this file, one JSON object a line (docs/simulator.md, \"The record\").")
    var simulatorRecord: String?

    func run() async throws {
        ReloadSignal.ignoreUntilReady()
        let config = try loadConfiguration()
        let logger = Logger(label: "pushctl.serve")

        let registry = try RegistryStores.openForCommand(config, options: RegistryOptions())

        let credentials = await Self.credentialStatuses(config, logger: logger)
        var devKeys: [String: String] = [:]
        for (id, app) in config.apps.sorted(by: { $0.key < $1.key })
        where app.sendsToSimulator(config.simulator) && !APIKeys(apps: config.apps).hasKeys(for: id) {
            // A simulator app cannot reach Apple, so an ephemeral key is harmless and lets `make run` work
            // on a fresh clone. Apps with real endpoints need keys in the config.
            devKeys[id] = APIKeys.generate()
        }
        let keys = Self.keys(config, devKeys: devKeys)

        let simulator = try await SimulatorHost.startIfNeeded(
            config: config, record: simulatorRecord.map(absolutePath), logger: logger)
        if simulatorRecord != nil, simulator == nil {
            throw CLIError.usage("--simulator-record needs the built-in simulator: no app sends to it (an endpoint `simulator`)")
        }
        let webhooks = try WebhookSetup.dispatcher(config: config, apps: config.apps, store: registry.deliveryStore, logger: logger)
        let server = PushServer(
            configuration: config, registry: registry, keys: keys, credentials: credentials, webhooks: webhooks,
            userSecrets: try WebhookSetup.userSecrets(config: config), services: await Self.serviceHealth(config, logger: logger),
            inbox: simulator, logger: logger)
        // The server's ServiceGroup stops on the same signals; this only bounds how long that may take.
        let deadline = SignalWatcher("pushctl serve", deadlineSeconds: SignalWatcher.stopDeadlineSeconds) { _ in }
        defer { deadline.cancel() }
        let (banner, settings, keysShown, simulatorPort) = (self, config, devKeys, simulator?.port)
        let running = RunningConfiguration(config)
        let reloads = ReloadSignal { await banner.reload(server, running: running, devKeys: keysShown, logger: logger) }
        defer { reloads.cancel() }
        do {
            try await server.run { port, adminPort in
                // The ports the listeners got (what port 0 picked): the banner names where the server answers.
                var bound = settings
                bound.server.port = port
                bound.server.admin.port = adminPort
                banner.printBanner(config: bound, devKeys: keysShown, simulatorPort: simulatorPort)
            }
        } catch let error as ListenError {
            try? await simulator?.stop()
            throw CLIError(code: 1, message: error.description)
        } catch {
            try? await simulator?.stop()
            throw CLIError(code: 1, message: "server stopped: \(error)")
        }
        try? await simulator?.stop()
    }

    /// The banner's simulator lines: its address, then each service it plays for this configuration, where, and for
    /// which apps (a service no app sends to through it is not listed).
    static func simulatorLines(config: PushConfiguration, base: String) -> [String] {
        let apps = config.apps.sorted { $0.key < $1.key }
        func users(_ uses: (AppSettings) -> Bool) -> String { apps.filter { uses($0.value) }.map(\.key).joined(separator: ", ") }
        let apns = users { $0.apns?.endpoint == .simulator }
        let web = users { $0.webPush?.allowedHosts.contains(config.simulator.hostAndPort) == true }
        let fcm = users { $0.fcm?.endpoint == .simulator }
        var lines = ["  simulator: \(base) (certificates in \(config.simulator.certificates)), playing:"]
        if !apns.isEmpty { lines.append("    APNs      \(base)/3/device/<token>  for \(apns)") }
        if !web.isEmpty { lines.append("    Web Push  \(base)/wp/<subscription>  (new ones: POST \(base)/subscribe)  for \(web)") }
        if !fcm.isEmpty {
            lines.append("    FCM       \(base)/v1/projects/<project>/messages:send  (tokens: \(base)/token)  for \(fcm)")
        }
        let hms = users { $0.hms?.endpoint == .simulator }
        if !hms.isEmpty {
            lines.append("    Push Kit  \(base)/v1/<clientId>/messages:send  (tokens: \(base)/oauth2/v3/token)  for \(hms)")
        }
        let harmonyos = users { $0.harmonyos?.endpoint == .simulator }
        if !harmonyos.isEmpty {
            lines.append("    HarmonyOS \(base)/v3/<projectId>/messages:send  (the service account's JWT)  for \(harmonyos)")
        }
        let up = users { $0.unifiedPush?.exemptHosts.contains(config.simulator.hostAndPort) == true }
        if !up.isEmpty {
            lines.append("    UnifiedPush  \(base)/up/<id>  (new ones: POST \(base)/up/register)  for \(up)")
        }
        return lines
    }

    func printBanner(config: PushConfiguration, devKeys: [String: String], simulatorPort: Int?) {
        let base = "http://\(config.server.address)"
        let admin = "http://\(config.server.admin)"
        let me = CommandLine.arguments.first ?? "pushctl"
        var lines: [String]
        if config.server.servesOneListener {
            lines = ["PushProvider is listening on \(base) (API, admin and console on one listener)"]
        } else {
            lines = ["PushProvider is listening on \(base) (API), admin on \(admin)"]
        }
        lines.append("  health:  curl -s \(base)/healthz")
        lines.append("  details: curl -s \(admin)/healthz/details")
        lines.append("  metrics: curl -s \(admin)/metrics")
        lines.append("  console: \(admin)/console")
        if let simulatorPort {
            lines += Self.simulatorLines(config: config, base: "https://\(config.simulator.host):\(simulatorPort)")
        }
        let sample = "<740f4707 bebcf74f 9b7c25d4 8e335894 5f6aa01d a5ddb387 462c7eaf 61bb78ad>"
        for (app, key) in devKeys.sorted(by: { $0.key < $1.key }) {
            lines.append("")
            lines.append("App '\(app)' has no API keys configured; this run accepts a development send key:")
            lines.append("  \(key)")
            guard config.apps[app]?.apns != nil else {
                // A web-only or Android-only app: no token to register the classic way.
                let services = config.apps[app]?.services.map(\.rawValue).joined(separator: ", ") ?? ""
                lines.append("Its services: \(services) (no APNs); docs/webpush.md and docs/fcm.md show how its devices register")
                continue
            }
            lines.append("Register a device exactly as the classic iOS client does:")
            lines.append("  curl -s -X POST \(base)/v1/apps/\(app)/devices -H 'Authorization: Bearer \(key)' --data 'oldToken=(null)&newToken=\(sample)'")
            lines.append("Send it a notification through the simulator:")
            lines.append("  \(me) send --config \(global.configPath) --app \(app) --token 740f4707bebcf74f9b7c25d48e3358945f6aa01da5ddb387462c7eaf61bb78ad --alert \"Hello from PushProvider\" --sound default")
        }
        // Unbuffered, so a script or a person sees the banner at once.
        FileHandle.standardOutput.write(Data((lines.joined(separator: "\n") + "\n").utf8))
    }
}
