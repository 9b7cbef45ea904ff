/// APNs environments. A device token belongs to exactly one.
public enum APNsEnvironment: String, Sendable, CaseIterable, Codable {
    /// The sandbox (`api.sandbox.push.apple.com`); tokens from development builds.
    case development
    /// Production (`api.push.apple.com`); tokens from App Store and TestFlight builds.
    case production
}

/// The whole configuration file: `Config/pushctl.json` by default.
///
/// Relative paths in the file are resolved against the directory that holds it, so cron and systemd can
/// run `pushctl` from any working directory.
public struct PushConfiguration: Sendable, Equatable {
    /// The registry: a SQLite file path (default `../data/pushctl.sqlite`, beside `Config/`) or a PostgreSQL
    /// URL `postgres://user@host:port/database` (no password in it).
    public var database: String
    /// A file holding the PostgreSQL password (first line), if the server wants one.
    public var databasePasswordFile: String?
    /// The name of an environment variable holding the PostgreSQL password, if the server wants one.
    public var databasePasswordEnv: String?
    /// Where `pushctl serve` listens. Default `127.0.0.1:8080`.
    public var server: ServerSettings
    /// The built-in simulator. Default `127.0.0.1:2197`, certificates in `../Certificates/dev`.
    public var simulator: SimulatorSettings
    /// The apps this provider sends for, by app id (the `{app}` in API paths and `--app`).
    public var apps: [String: AppSettings]
    /// How long a broadcast or send job waits for an unavailable database (locked, I/O errors) before it
    /// stops as interrupted, in seconds. Default 120.
    public var databaseOutageLimitSeconds: Int

    /// The default of ``databaseOutageLimitSeconds``.
    public static let defaultDatabaseOutageLimitSeconds = 120
    /// Devices per shard when a broadcast or send job starts (100–10,000,000). Default 25,000.
    public var shardSize = BroadcastShard.defaultSize
    /// How long a worker's claim on a shard lasts without a heartbeat (renewed every sixth of it): a worker
    /// that dies holds its shards this long at most. 2–3600 s, default 30.
    public var shardLeaseSeconds = PushConfiguration.defaultShardLeaseSeconds
    /// The default of ``shardLeaseSeconds``.
    public static let defaultShardLeaseSeconds = 30
    /// How long delivery history is kept, in days (1–3650, default 30): delivery-log and prune-log rows, and
    /// the per-device outcomes of completed broadcasts and send jobs, older than this are deleted by
    /// `pushctl serve`, `pushctl worker` (at start and hourly) and `pushctl maintenance`.
    public var deliveryRetentionDays = PushConfiguration.defaultDeliveryRetentionDays
    /// What the environment's `PUSHCTL_` variables set over the file (``ConfigurationEnvironment``), by variable.
    public var environmentOverrides: [ConfigurationEnvironment.Override] = []
    /// The default of ``deliveryRetentionDays``.
    public static let defaultDeliveryRetentionDays = 30
    /// The allowed range of ``deliveryRetentionDays``.
    public static let deliveryRetentionRange = 1...3650
    /// Which outcomes become delivery-log rows for every app without its own `deliveryLog` (`deliveryLog`).
    /// Default ``DeliveryLogScope/failures``. See ``deliveryLog(for:)``.
    public var deliveryLog = DeliveryLogScope.default

    /// The outbound HTTP proxy to the push services for every app without its own (`proxy`), or nil: then the
    /// proxy variables of the environment apply (`HTTPS_PROXY`, `ALL_PROXY`, `NO_PROXY`: ``ProxyEnvironment``).
    public var proxy: ProxySettings?

    /// `/healthz` reports `degraded` when an app's certificate expires in fewer days than this. Default 30.
    public var healthWarningDays = PushConfiguration.defaultHealthWarningDays
    /// The default of ``healthWarningDays``.
    public static let defaultHealthWarningDays = 30

    /// Creates a configuration.
    public init(
        database: String, server: ServerSettings = .init(), simulator: SimulatorSettings,
        apps: [String: AppSettings], databaseOutageLimitSeconds: Int = PushConfiguration.defaultDatabaseOutageLimitSeconds
    ) {
        self.database = database
        self.server = server
        self.simulator = simulator
        self.apps = apps
        self.databaseOutageLimitSeconds = databaseOutageLimitSeconds
    }

    /// The app with this id, or an error that names the configured apps.
    public func app(_ id: String) throws(ConfigurationError) -> AppSettings {
        guard let app = apps[id] else {
            let known = apps.keys.sorted().joined(separator: ", ")
            throw ConfigurationError("unknown app '\(id)'; configured apps: \(known.isEmpty ? "(none)" : known)")
        }
        return app
    }

    /// The proxy `app`'s connections to its push services go through: its own, else the global one, else nil.
    public func proxy(for app: AppSettings) -> ProxySettings? { app.proxy ?? proxy }

    /// Which of `app`'s outcomes become delivery-log rows: its own `deliveryLog`, else the global one.
    public func deliveryLog(for app: AppSettings) -> DeliveryLogScope { app.deliveryLog ?? deliveryLog }

    /// Every app's delivery-log scope (the engine's view).
    public var deliveryLogs: [String: DeliveryLogScope] { apps.mapValues { deliveryLog(for: $0) } }
}

/// The HTTP API's listening addresses: the public listener (the API apps and backends call, and a detail-free
/// `/healthz`) and the admin listener (`/metrics`, `/healthz/details`, the console, and the API the console calls).
public struct ServerSettings: Sendable, Equatable {
    /// Interface to bind. Default `127.0.0.1` (put a TLS proxy in front for the internet).
    public var host: String
    /// TCP port. Default 8080.
    public var port: Int
    /// Requests per second allowed per API key (token bucket refill). Default 100.
    public var rateLimitPerSecond: Double
    /// Burst size of the per-key token bucket. Default 200.
    public var rateLimitBurst: Double
    /// The admin listener (`server.admin`). Default ``defaultAdmin``, loopback: what it serves (every app id, the
    /// credentials' expiry, metrics, the console's login page) is for operators, not for the internet.
    public var admin: ListenAddress

    /// The admin listener's default address, `127.0.0.1:8081`.
    public static let defaultAdmin = ListenAddress(host: "127.0.0.1", port: 8081)

    /// Creates server settings with the documented defaults.
    public init(
        host: String = "127.0.0.1", port: Int = 8080, rateLimitPerSecond: Double = 100, rateLimitBurst: Double = 200,
        admin: ListenAddress = ServerSettings.defaultAdmin
    ) {
        self.host = host
        self.port = port
        self.rateLimitPerSecond = rateLimitPerSecond
        self.rateLimitBurst = rateLimitBurst
        self.admin = admin
    }

    /// The public listener's address.
    public var address: ListenAddress { ListenAddress(host: host, port: port) }

    /// True when the admin listener names the public listener's address (host and port, port 0 included): one
    /// listener then serves everything, the admin routes included, to whoever reaches it.
    public var servesOneListener: Bool { admin == address }
}

/// The built-in simulator's address and certificate directory (it plays APNs, Web Push services and FCM).
public struct SimulatorSettings: Sendable, Equatable {
    /// Interface to bind. Default `127.0.0.1`.
    public var host: String
    /// TCP port. Default 2197 (APNs' alternative port).
    public var port: Int
    /// Directory with `ca.pem`, `server.pem`, `server.key` (absolute after loading).
    public var certificates: String

    /// `host:port`, as a Web Push app lists the simulator in `allowedHosts`.
    public var hostAndPort: String { "\(host):\(port)" }

    /// Creates simulator settings.
    public init(host: String = "127.0.0.1", port: Int = 2197, certificates: String) {
        self.host = host
        self.port = port
        self.certificates = certificates
    }
}

/// How the provider authenticates to APNs.
public enum AuthSettings: Sendable, Equatable {
    /// A certificate and key in a .p12, its password read from a file or an environment variable.
    case certificate(p12: String, password: PasswordSource)
    /// A token-signing key (.p8) with its key id and team id.
    case token(p8: String, keyId: String, teamId: String)
}

/// Where a .p12 password comes from. Never inline: passwords stay out of config files and argv.
public enum PasswordSource: Sendable, Equatable {
    /// A file whose content (trailing newline removed) is the password.
    case file(String)
    /// An environment variable's value.
    case environment(String)
}

/// One app's settings: the services it sends through (``apns``, ``webPush``, ``fcm``: each optional, at least one
/// configured) and what applies to the app's traffic as a whole (keys, window, connections, outage limit, webhook,
/// proxy, delivery log, user secret, default zone). A key that shapes one service's requests or credentials lives in
/// that service's settings (docs/configuration.md, "Which key goes where").
public struct AppSettings: Sendable, Equatable {
    /// APNs for this app (`apps.ID.apns`, or the flat APNs keys of older files), or nil: its iOS devices cannot
    /// register and a broadcast has none.
    public var apns: APNsSettings?
    /// True when ``apns`` came from the flat keys at the app's top level (the form before `apps.ID.apns`): it loads as
    /// before, and `pushctl doctor` suggests the section.
    public var apnsKeysAreFlat = false
    /// `sha256:<hex>` hashes of keys allowed to register and unregister tokens.
    public var registrationKeys: [String]
    /// `sha256:<hex>` hashes of keys allowed to count and send.
    public var sendKeys: [String]
    /// Notifications in flight at once when sending for this app, or nil for the sender's default (500).
    /// Raise it when a push service is far away: it must cover rate × round-trip time.
    public var window: Int?
    /// HTTP/2 connections to each push service endpoint, or nil for one. Each carries its own window of
    /// ``window`` notifications: one connection holds at most ~1000 streams, so over a long round trip
    /// more connections send more (Apple recommends several for throughput).
    public var connections: Int?
    /// How long a push service may stay unreachable (refused or reset connections, DNS or TLS handshake failures)
    /// before a send or broadcast stops as interrupted, in seconds; nil for the default (600). Until then
    /// the sender reconnects with backoff and no device's outcome is decided.
    public var outageLimitSeconds: Int?
    /// Where pruned tokens and final failures are POSTed (signed), or nil for none.
    public var webhook: WebhookSettings?
    /// This app's outbound HTTP proxy (`apps.ID.proxy`), overriding the global `proxy`; nil for the
    /// global one. See ``PushConfiguration/proxy(for:)``.
    public var proxy: ProxySettings?
    /// Which of this app's outcomes become delivery-log rows (`apps.ID.deliveryLog`), overriding the global
    /// `deliveryLog`; nil for the global one. See ``PushConfiguration/deliveryLog(for:)``.
    public var deliveryLog: DeliveryLogScope?
    /// The secret under which the app's backend signs user ids (`apps.ID.userSecretFile` or `userSecretEnv`):
    /// a registration naming a user must carry `userAuth` = HMAC-SHA256(user) under it, unless a send key makes
    /// it (see ``UserAuth``). Nil: only send keys may attach users.
    public var userSecret: PasswordSource?
    /// The IANA zone of devices that registered none (`apps.ID.defaultTimeZone`, default UTC): where a local-time
    /// send reaches them.
    public var defaultTimeZone: String?
    /// Web Push for this app (`apps.ID.webpush`), or nil: its browsers cannot register.
    public var webPush: WebPushSettings?
    /// Android through FCM HTTP v1 for this app (`apps.ID.fcm`), or nil: its Android devices cannot register.
    public var fcm: FCMSettings?
    /// Huawei Push Kit for HMS Core devices (`apps.ID.hms`), or nil: its HMS devices cannot register.
    public var hms: HMSSettings?
    /// Huawei Push Kit for HarmonyOS NEXT devices (`apps.ID.harmonyos`), or nil: its HarmonyOS devices cannot register.
    public var harmonyos: HarmonyOSSettings?
    /// UnifiedPush for this app (`apps.ID.unifiedpush`), or nil: its UnifiedPush devices cannot register.
    public var unifiedPush: UnifiedPushSettings?

    /// The zone local-time sends use for devices without one.
    public var effectiveDefaultTimeZone: String { defaultTimeZone ?? "UTC" }

    /// The environment an APNs token gets when its registration names none: the APNs section's
    /// (``APNsSettings/defaultEnvironment``), production for an app without APNs.
    public var defaultEnvironment: APNsEnvironment { apns?.defaultEnvironment ?? .production }

    /// The services this app has, in a stable order.
    public var services: [PushService] {
        var out: [PushService] = []
        if apns != nil { out.append(.apns) }
        if webPush != nil { out.append(.webpush) }
        if fcm != nil { out.append(.fcm) }
        if hms != nil { out.append(.hms) }
        if harmonyos != nil { out.append(.harmonyos) }
        if unifiedPush != nil { out.append(.unifiedpush) }
        return out
    }

    /// The accepted range of ``window``.
    public static let windowRange = 1...10_000
    /// The accepted range of ``connections``.
    public static let connectionsRange = 1...16
    /// The accepted range of ``outageLimitSeconds`` (one second to one day).
    public static let outageLimitRange = 1...86_400

    /// Creates app settings with the services given (at least one, for a configuration that loads).
    public init(
        apns: APNsSettings? = nil, webPush: WebPushSettings? = nil, fcm: FCMSettings? = nil, hms: HMSSettings? = nil,
        unifiedPush: UnifiedPushSettings? = nil, registrationKeys: [String] = [], sendKeys: [String] = [], window: Int? = nil,
        connections: Int? = nil, outageLimitSeconds: Int? = nil, webhook: WebhookSettings? = nil
    ) {
        self.apns = apns
        self.webPush = webPush
        self.fcm = fcm
        self.hms = hms
        self.unifiedPush = unifiedPush
        self.webhook = webhook
        self.window = window
        self.connections = connections
        self.outageLimitSeconds = outageLimitSeconds
        self.registrationKeys = registrationKeys
        self.sendKeys = sendKeys
    }

    /// Creates the settings of an app with APNs (the form tests and older callers use).
    public init(
        topic: String, endpoint: APNsEndpoint, caFile: String? = nil, auth: AuthSettings,
        registrationKeys: [String] = [], sendKeys: [String] = [], payloadLimit: Int? = nil, window: Int? = nil,
        connections: Int? = nil, outageLimitSeconds: Int? = nil, webhook: WebhookSettings? = nil
    ) {
        self.init(
            apns: APNsSettings(topic: topic, endpoint: endpoint, caFile: caFile, auth: auth, payloadLimit: payloadLimit),
            registrationKeys: registrationKeys, sendKeys: sendKeys, window: window, connections: connections,
            outageLimitSeconds: outageLimitSeconds, webhook: webhook)
    }

    /// True when every service of the app sends to the built-in simulator at `simulator`: APNs and FCM with the
    /// endpoint `simulator`, Web Push with the simulator's `host:port` among its allowed hosts, UnifiedPush with it among
    /// its exempt hosts (the simulator's distributor is on this machine). (A web app's subscriptions
    /// may still name the known push services; what makes it a simulator app is that its developer pointed it there.)
    /// `pushctl serve` gives such an app an ephemeral development key and starts the simulator for it.
    public func sendsToSimulator(_ simulator: SimulatorSettings) -> Bool {
        if let apns, apns.endpoint != .simulator { return false }
        if let fcm, fcm.endpoint != .simulator { return false }
        if let hms, hms.endpoint != .simulator { return false }
        if let harmonyos, harmonyos.endpoint != .simulator { return false }
        if let webPush, !webPush.allowedHosts.contains(simulator.hostAndPort) { return false }
        if let unifiedPush, !unifiedPush.exemptHosts.contains(simulator.hostAndPort) { return false }
        return !services.isEmpty
    }

    /// The APNs settings, or an error saying the app has no APNs (for what only APNs does: channels, Live
    /// Activities, certificate checks).
    public func requireAPNs(app id: String) throws(ConfigurationError) -> APNsSettings {
        guard let apns else {
            throw ConfigurationError("app '\(id)' has no apns service (add apps.\(id).apns to the configuration)")
        }
        return apns
    }
}

/// A configuration problem, with a message that names the key or value at fault.
public struct ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// One line saying what is wrong.
    public let message: String
    /// Creates an error.
    public init(_ message: String) { self.message = message }
    /// The message.
    public var description: String { message }
}
