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

        /// Loads `app`'s credentials as the sender would and describes them at `now`: a certificate that is
        /// expired, or credentials that cannot be loaded, are not `loaded` (with the reason in ``error``).
        public static func loading(_ app: AppSettings, now: Date = Date()) -> CredentialStatus {
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

    let configuration: PushConfiguration
    let registry: any RegistryStore
    let keys: APIKeys
    let limiter: RateLimiter
    let limits: Limits
    let batcher: RegistrationBatcher
    let credentials: [String: CredentialStatus]
    let prometheus: PrometheusCollectorRegistry
    let metrics: ServerMetrics
    let jobs: JobRunner
    let webhooks: WebhookDispatcher?
    let logger: Logger
    /// The clock `/healthz` reads at each request (certificate days left).
    let now: @Sendable () -> Date
    /// Channel-management clients by app, made at first use.
    let channelClients = Mutex<[String: ChannelClient]>([:])

    /// Creates the server. `keys` usually comes from `APIKeys(apps: configuration.apps)`; `now` is the clock
    /// `/healthz` reads at each request.
    public init(
        configuration: PushConfiguration, registry: any RegistryStore, keys: APIKeys,
        credentials: [String: CredentialStatus] = [:], prometheus: PrometheusCollectorRegistry = .init(),
        limits: Limits = Limits(), jobSettings: JobRunner.Settings = .init(), webhooks: WebhookDispatcher? = nil,
        logger: Logger = Logger(label: "pushctl.serve"), now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.webhooks = webhooks
        self.now = now
        self.configuration = configuration
        self.registry = registry
        self.keys = keys
        self.limiter = RateLimiter(rate: configuration.server.rateLimitPerSecond, burst: configuration.server.rateLimitBurst)
        self.limits = limits
        self.batcher = RegistrationBatcher(registry: registry)
        self.credentials = credentials
        self.prometheus = prometheus
        self.metrics = ServerMetrics(registry: prometheus)
        let engine = BroadcastConfiguration(configuration)
        self.jobs = JobRunner(
            store: registry.deliveryStore, topics: configuration.apps.mapValues(\.topic), configuration: engine,
            settings: jobSettings, logger: logger
        ) { app, breakers in
            guard let settings = configuration.apps[app] else { throw APIError(.notFound, "unknown_app", "unknown app \(app)") }
            return try Sender.forApp(settings, in: configuration, breakerStates: breakers, logger: logger)
        }
        self.logger = logger
    }

    /// The router with every route and middleware.
    func makeRouter() -> Router<BasicRequestContext> {
        let router = Router(context: BasicRequestContext.self)
        router.middlewares.add(RequestLogMiddleware(logger: logger, metrics: metrics))
        router.middlewares.add(JSONErrorMiddleware())
        addDeviceRoutes(to: router)
        addLiveActivityTokenRoutes(to: router)
        addLiveActivityRoutes(to: router)
        addBroadcastChannelRoutes(to: router)
        addNotificationRoutes(to: router)
        addPayloadPreviewRoutes(to: router)
        addDeliveryRoutes(to: router)
        addHealthRoutes(to: router)
        addConsoleRoutes(to: router)
        return router
    }

    /// Starts listening (port 0 picks a free port) and returns once the socket is bound.
    public func start(host: String? = nil, port: Int? = nil) async throws -> RunningServer {
        await jobs.resumeUnfinished()
        jobs.startAdopting()
        webhooks?.start()
        let bound = AsyncStream<Int>.makeStream()
        let app = Application(
            router: makeRouter(),
            configuration: .init(
                address: .hostname(host ?? configuration.server.host, port: port ?? configuration.server.port),
                serverName: nil),
            onServerRunning: { channel in
                bound.continuation.yield(channel.localAddress?.port ?? 0)
                bound.continuation.finish()
            },
            logger: logger)
        let group = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: logger))
        let task = Task { try await group.run() }
        var iterator = bound.stream.makeAsyncIterator()
        guard let boundPort = await iterator.next() else {
            try await task.value
            throw APIError(.internalServerError, "not_started", "server did not start")
        }
        return RunningServer(port: boundPort, group: group, task: task, server: self)
    }

    /// Runs until SIGTERM or SIGINT, then stops accepting, finishes requests, commits queued registrations
    /// and stops the running send job at a checkpoint (it resumes at the next start). `onListening` runs once
    /// the socket is bound (so a banner never claims a port the server did not get); a bind that fails throws
    /// ``ListenError``.
    public func run(onListening: @escaping @Sendable () -> Void = {}) async throws {
        // SQLite only: WAL checkpoints off the request path (PostgreSQL checkpoints itself).
        let checkpoints = try (registry as? Registry)?.startBackgroundCheckpoints()
        defer { checkpoints?.stop() }
        await jobs.resumeUnfinished()
        jobs.startAdopting()
        webhooks?.start()
        let (host, port) = (configuration.server.host, configuration.server.port)
        let app = Application(
            router: makeRouter(),
            configuration: .init(address: .hostname(host, port: port), serverName: nil),
            onServerRunning: { _ in onListening() },
            logger: logger)
        let group = ServiceGroup(
            configuration: .init(services: [app], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        do {
            try await group.run()
        } catch let error as IOError {
            await jobs.shutdown()
            await webhooks?.stop()
            throw ListenError(host: host, port: port, error)
        }
        batcher.shutdown()
        await jobs.shutdown()
        await webhooks?.stop()
    }
}

/// A server started with ``PushServer/start(host:port:)``.
public struct RunningServer: Sendable {
    /// The bound TCP port.
    public let port: Int
    let group: ServiceGroup
    let task: Task<Void, any Error>
    let server: PushServer

    /// Graceful shutdown: stop accepting, finish requests, commit queued registrations.
    public func shutdown() async throws {
        await group.triggerGracefulShutdown()
        try await task.value
        server.batcher.shutdown()
        await server.jobs.shutdown()
        await server.webhooks?.stop()
    }
}
