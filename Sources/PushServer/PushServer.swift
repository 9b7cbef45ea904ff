import Foundation
import Hummingbird
import Logging
import Metrics
import NIOCore
import Prometheus
import PushCore
import PushDelivery
import PushSender
import PushStore
import ServiceLifecycle
import Synchronization
import UnixSignals

/// The HTTP API (`pushctl serve`): token registration, counts, health and metrics.
public final class PushServer: Sendable {
    /// Health of one app's credentials, as `pushctl serve` loaded them.
    public struct CredentialStatus: Sendable {
        /// True when the credentials loaded and can be used.
        public var loaded: Bool
        /// `certificate` or `token`.
        public var kind: String
        /// Days until the certificate expires (nil for .p8 keys).
        public var daysLeft: Int?
        /// Why loading failed.
        public var error: String?
        /// When the certificate expires (Unix seconds; nil for .p8 keys, which do not expire). When set,
        /// `/healthz` computes the days left at each request from it instead of ``daysLeft``.
        public var notAfter: Int64?

        /// Creates a status.
        public init(loaded: Bool, kind: String, daysLeft: Int? = nil, error: String? = nil, notAfter: Int64? = nil) {
            self.loaded = loaded
            self.kind = kind
            self.daysLeft = daysLeft
            self.error = error
            self.notAfter = notAfter
        }

        /// Loads an app's APNs credentials as the sender would and describes them at `now`: a certificate that is
        /// expired, or credentials that cannot be loaded, are not `loaded` (with the reason in ``error``).
        public static func loading(_ app: APNsSettings, now: Date = Date()) -> CredentialStatus {
            do {
                let health = CredentialHealth(try makeCredentials(for: app), now: now)
                return CredentialStatus(
                    loaded: !health.expired, kind: health.kind, daysLeft: health.daysLeft,
                    error: health.expired ? "certificate expired" : nil, notAfter: health.certificate?.notAfter)
            } catch {
                let kind: String
                if case .token = app.auth { kind = "token" } else { kind = "certificate" }
                return CredentialStatus(loaded: false, kind: kind, error: "\(error)")
            }
        }
    }

    /// Body limits and the like, with their documented defaults.
    public struct Limits: Sendable {
        /// Largest body on device routes. Default 16 KiB.
        public var deviceBodyBytes = 16 * 1024
        /// Largest body on notification routes. Default 64 KiB.
        public var notificationBodyBytes = 64 * 1024
        /// Creates the defaults.
        public init() {}
    }

    /// What a reload replaces (``reload(configuration:keys:credentials:userSecrets:)``), read per request.
    let live: LiveConfiguration
    /// The configuration now (apps, keys' hashes, credentials paths: whatever the last reload applied).
    var configuration: PushConfiguration { live.snapshot.configuration }
    /// The API keys now.
    var keys: APIKeys { live.snapshot.keys }
    /// Each app's credentials as last loaded (at start or at the last reload).
    var credentials: [String: CredentialStatus] { live.snapshot.credentials }
    /// Each app's `userSecret` (read at start and at each reload), under which `userAuth` proofs are checked.
    var userSecrets: [String: [UInt8]] { live.snapshot.userSecrets }
    /// Each app's Web Push and FCM health as last loaded.
    var serviceHealth: [String: [ServiceHealth]] { live.snapshot.services }
    let registry: any RegistryStore
    let limiter: RateLimiter
    let limits: Limits
    let batcher: RegistrationBatcher
    let prometheus: PrometheusCollectorRegistry
    let metrics: ServerMetrics
    let jobs: JobRunner
    let webhooks: WebhookDispatcher?
    /// The database's part of `/healthz`, kept fresh in the background.
    let health: HealthMonitor
    let logger: Logger
    /// The clock `/healthz` reads at each request (certificate days left).
    let now: @Sendable () -> Date
    /// Channel-management clients by app, made at first use.
    let channelClients = Mutex<[String: ChannelClient]>([:])
    /// Each VAPID key file's public key (base64url), read once: `GET /v1/apps/{app}/webpush/key`.
    let webPushKeys = Mutex<[String: String]>([:])
    /// Each FCM service account file's project, read once: the development inbox's FCM entries.
    let fcmProjects = Mutex<[String: String]>([:])
    /// The built-in simulator's record, when this server runs one (``DevelopmentInbox``).
    let developmentInbox: (any DevelopmentInbox)?
    /// Per app, the newest inbox entry its last "clear" hid.
    let inboxCleared = Mutex<[String: Int64]>([:])

    /// Creates the server. `keys` usually comes from `APIKeys(apps: configuration.apps)`; `now` is the clock
    /// `/healthz` reads at each request.
    public init(
        configuration: PushConfiguration, registry: any RegistryStore, keys: APIKeys,
        credentials: [String: CredentialStatus] = [:], prometheus: PrometheusCollectorRegistry = .init(),
        limits: Limits = Limits(), jobSettings: JobRunner.Settings = .init(), webhooks: WebhookDispatcher? = nil,
        userSecrets: [String: [UInt8]] = [:], services: [String: [ServiceHealth]] = [:], inbox: (any DevelopmentInbox)? = nil,
        logger: Logger = Logger(label: "pushctl.serve"), now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.webhooks = webhooks
        self.developmentInbox = inbox
        self.now = now
        let live = LiveConfiguration(.init(
            configuration: configuration, keys: keys, credentials: credentials, userSecrets: userSecrets, services: services))
        self.live = live
        self.registry = registry
        self.limiter = RateLimiter(rate: configuration.server.rateLimitPerSecond, burst: configuration.server.rateLimitBurst)
        self.limits = limits
        self.batcher = RegistrationBatcher(registry: registry)
        self.health = HealthMonitor(registry: registry)
        self.prometheus = prometheus
        self.metrics = ServerMetrics(registry: prometheus)
        let engine = BroadcastConfiguration(configuration)
        self.jobs = JobRunner(
            store: registry.deliveryStore, apps: Set(configuration.apps.keys), configuration: engine,
            settings: jobSettings, logger: logger
        ) { app, breakers in
            // The configuration of the moment: a sender made after a reload uses the reloaded credentials.
            let configuration = live.snapshot.configuration
            guard let settings = configuration.apps[app] else { throw APIError(.notFound, "unknown_app", "unknown app \(app)") }
            return try ServiceRouter.forApp(settings, in: configuration, breakerStates: breakers, logger: logger)
        }
        self.logger = logger
    }

    /// Applies a reloaded configuration (SIGHUP): requests that start from now on see `configuration`, `keys`,
    /// `credentials` and `userSecrets`; a request in flight finishes on what it started with. Send jobs that run
    /// keep their sender (their transfers finish on the old credentials); the next job of each app builds a new
    /// sender from the new configuration, and channel-management clients are made afresh at their next use. The
    /// caller has already kept the running values of what cannot change live (``ConfigurationReload``).
    public func reload(
        configuration: PushConfiguration, keys: APIKeys, credentials: [String: CredentialStatus],
        userSecrets: [String: [UInt8]], services: [String: [ServiceHealth]] = [:]
    ) async {
        live.replace(with: .init(
            configuration: configuration, keys: keys, credentials: credentials, userSecrets: userSecrets, services: services))
        channelClients.withLock { $0.removeAll() }
        await jobs.reload(apps: Set(configuration.apps.keys))
    }

    /// Which routes a listener serves.
    public enum Listener: Sendable, Equatable {
        /// The API and a detail-free `/healthz`: what apps and backends reach, possibly from the internet.
        case publicAPI
        /// Everything: the API (the console calls it, on the same origin), `/healthz`, `/healthz/details`,
        /// `/metrics` and the console. Also what a single listener serves when `server.admin` names the public
        /// address.
        case admin
    }

    /// The router of one listener, with its routes and middleware.
    func makeRouter(for listener: Listener) -> Router<BasicRequestContext> {
        let router = Router(context: BasicRequestContext.self)
        router.middlewares.add(RequestLogMiddleware(logger: logger, metrics: metrics))
        router.middlewares.add(JSONErrorMiddleware(listener: listener, unavailable: { [health] in health.noteUnavailable($0) }))
        addDeviceRoutes(to: router)
        addUserRoutes(to: router)
        addLiveActivityTokenRoutes(to: router)
        addLiveActivityRoutes(to: router)
        addBroadcastChannelRoutes(to: router)
        addNotificationRoutes(to: router)
        addPayloadPreviewRoutes(to: router)
        addDeliveryRoutes(to: router)
        addInboxRoutes(to: router)
        addHealthRoutes(to: router, listener: listener)
        if listener == .admin { addConsoleRoutes(to: router) }
        return router
    }

    /// The listeners to open: one serving everything when both addresses are the same, else the public one and
    /// the admin one.
    static func plan(public address: ListenAddress, admin: ListenAddress) -> [(listener: Listener, address: ListenAddress)] {
        address == admin ? [(.admin, address)] : [(.publicAPI, address), (.admin, admin)]
    }

    /// One Hummingbird application per listener; `bound` hears each listener's port once its socket is bound.
    func applications(
        _ plan: [(listener: Listener, address: ListenAddress)],
        bound: (@Sendable (Listener, Int) -> Void)? = nil
    ) -> [any Service] {
        plan.map { listener, address in
            Application(
                router: makeRouter(for: listener),
                configuration: .init(address: .hostname(address.host, port: address.port), serverName: nil),
                onServerRunning: { channel in bound?(listener, channel.localAddress?.port ?? 0) },
                logger: logger)
        }
    }

    /// The server's one start path (``start(host:port:admin:)`` and ``run(onListening:)`` differ only in their
    /// listeners and signals): a first health probe and the unfinished jobs resumed before listening, then one
    /// ServiceGroup of the background services and the listeners. The group stops in reverse order: the listeners
    /// first (finishing their requests), then queued registrations are committed, the running send job stops at a
    /// checkpoint, the webhook dispatcher finishes its request, retention and the health probe stop, and the
    /// SQLite checkpointer takes its last checkpoint.
    func serviceGroup(
        _ plan: [(listener: Listener, address: ListenAddress)], signals: [UnixSignal],
        bound: @escaping @Sendable (Listener, Int) -> Void
    ) async throws -> ServiceGroup {
        await health.probe()
        await jobs.resumeUnfinished()
        var services: [any Service] = []
        // SQLite only: WAL checkpoints off the request path (PostgreSQL checkpoints itself).
        if let sqlite = registry as? SQLiteRegistry {
            let checkpointer = try await sqlite.executor.run { () throws(StoreError) in try sqlite.startBackgroundCheckpoints() }
            services.append(LifecycleService.loop("checkpoints") { await checkpointer.run() })
        }
        services.append(health)
        let retention = HistoryRetention(registry: registry, days: configuration.deliveryRetentionDays)
        let logger = self.logger
        services.append(LifecycleService.loop("retention") { await retention.run(logger: logger) })
        if let webhooks {
            services.append(LifecycleService("webhooks", start: { webhooks.start() }, stop: { await webhooks.stop() }))
        }
        let jobs = self.jobs
        services.append(LifecycleService("jobs", start: { jobs.startAdopting() }, stop: { await jobs.shutdown() }))
        services.append(batcher)
        services += applications(plan, bound: bound)
        return ServiceGroup(configuration: .init(services: services, gracefulShutdownSignals: signals, logger: logger))
    }

    /// Starts listening (port 0 picks a free port) and returns once every socket is bound. Without `admin`, one
    /// listener on `host:port` serves everything (as a configuration naming the same address for both does);
    /// with it, two listeners (even when both ask for port 0): the public one serves the API and `/healthz`, the
    /// admin one everything.
    public func start(host: String? = nil, port: Int? = nil, admin: ListenAddress? = nil) async throws -> RunningServer {
        let address = ListenAddress(host: host ?? configuration.server.host, port: port ?? configuration.server.port)
        let plan: [(listener: Listener, address: ListenAddress)] =
            admin.map { [(.publicAPI, address), (.admin, $0)] } ?? [(.admin, address)]
        let bound = AsyncStream<(Listener, Int)>.makeStream()
        let group = try await serviceGroup(plan, signals: [], bound: { bound.continuation.yield(($0, $1)) })
        let task = Task {
            // A listener that cannot bind ends the group: end the stream too, so start() reports it.
            defer { bound.continuation.finish() }
            try await group.run()
        }
        var ports: [Listener: Int] = [:]
        for await (listener, port) in bound.stream {
            ports[listener] = port
            if ports.count == plan.count { break }
        }
        guard ports.count == plan.count, let adminPort = ports[.admin] else {
            try await task.value
            throw APIError(.internalServerError, "not_started", "server did not start")
        }
        return RunningServer(port: ports[.publicAPI] ?? adminPort, adminPort: adminPort, group: group, task: task)
    }

    /// Runs until SIGTERM or SIGINT on the configured listeners (`server` and `server.admin`), then stops
    /// accepting, finishes requests, commits queued registrations and stops the running send job at a
    /// checkpoint (it resumes at the next start). `onListening` runs once every listener's socket is bound, with
    /// the ports they got (the public listener's, then the admin one's; the same when one listener serves
    /// everything), so a banner never claims a port the server did not get and names the one port 0 picked; a bind
    /// that fails throws ``ListenError`` naming it.
    public func run(onListening: @escaping @Sendable (_ port: Int, _ adminPort: Int) -> Void = { _, _ in }) async throws {
        let server = configuration.server
        let plan = Self.plan(public: server.address, admin: server.admin)
        let bound = Mutex<[Listener: Int]>([:])
        let group = try await serviceGroup(plan, signals: [.sigterm, .sigint]) { listener, port in
            let all = bound.withLock { ports -> [Listener: Int]? in
                ports[listener] = port
                return ports.count == plan.count ? ports : nil
            }
            if let all, let adminPort = all[.admin] { onListening(all[.publicAPI] ?? adminPort, adminPort) }
        }
        do {
            try await group.run()
        } catch let error as IOError {
            let up = bound.withLock { $0 }
            let failed = plan.first { up[$0.listener] == nil }?.address ?? server.address
            throw ListenError(host: failed.host, port: failed.port, error)
        }
    }
}

/// A server started with ``PushServer/start(host:port:)``.
public struct RunningServer: Sendable {
    /// The public listener's bound TCP port (the only listener's, when one serves everything).
    public let port: Int
    /// The admin listener's bound TCP port (``port`` when one listener serves everything).
    public let adminPort: Int
    let group: ServiceGroup
    let task: Task<Void, any Error>

    /// Graceful shutdown, as on SIGTERM: stop accepting, finish requests, commit queued registrations, stop the
    /// background services (see ``PushServer/serviceGroup(_:signals:bound:)``).
    public func shutdown() async throws {
        await group.triggerGracefulShutdown()
        try await task.value
    }
}
