import Foundation
import Logging
import PushCore
import Synchronization

/// Sends notifications to APNs over HTTP/2 (libcurl multi, one loop thread per endpoint) and applies Apple's
/// response rules — the one place where "retry or not" and "prune or not" are decided:
/// - 200, dead tokens and permanent rejections are final;
/// - 429/5xx answers are retried with backoff and the same apns-id, then deferred (not final);
/// - a connection that drops mid-request is resent at once (flagged possibly duplicated when the body left);
/// - an unreachable endpoint parks its notifications and reconnects with backoff; only after the outage
///   limit do they come back ``DeliveryResult/Kind/unsent`` (never final);
/// - refused credentials stop the endpoint (``EndpointStop``);
/// - the pruning breaker decides BadDeviceToken prunes.
///
/// One sender can serve many runs one after another (the server keeps one per app); call ``shutdown()`` when
/// done with it.
public final class APNsSender: Sendable {
    /// The settings in use.
    public let configuration: SenderConfiguration
    /// Live figures for `/metrics`.
    public let metrics = SenderMetrics()
    let credentials: CredentialProvider
    /// The sender skeleton every service shares (counts, retries, stops, the last step).
    let core: SenderCore
    var clock: SenderClock { core.clock }
    var sleeper: Sleeper { core.sleeper }
    var random: @Sendable () -> Double { core.random }
    var logger: Logger { core.logger }
    var reconnect: BackoffPolicy { core.reconnect }
    let identity: TLSIdentity?
    private let primary: SenderTarget
    private let byEnvironment: [APNsEnvironment: SenderTarget]
    /// The app's bundle id, or nil: a request without a topic (the engine's, which knows no APNs) gets this one with
    /// its push type's suffix.
    let bundleId: String?
    let shared: Mutex<Shared>
    /// Notifications waiting out a retry backoff, and the run's stopping flag (``abandonWaiting(_:)`` sets it): the
    /// retry rule the Web Push and FCM senders use too. Notifications parked for an unreachable endpoint stay in its
    /// ``EndpointState`` (a probe releases them); ``Shared``'s lock may take this one's, never the other way round.
    var waiting: WaitingRoom { core.waiting }

    /// Everything mutable, behind one lock. Callbacks never run while it is held.
    struct Shared {
        var endpoints: [SenderTarget: EndpointState] = [:]
        /// Breaker state persisted by earlier runs, by endpoint URL (used when an endpoint is first needed).
        var storedBreakers: [String: PruningBreaker.State]
    }

    /// Creates a sender for `target`; `byEnvironment` routes items whose environment is known (Apple's hosts).
    /// `breakerStates` continues each endpoint's pruning breaker from an earlier run (keyed by endpoint URL).
    /// Refuses an expired client certificate before any connection, naming the expiry date.
    public init(
        target: SenderTarget, byEnvironment: [APNsEnvironment: SenderTarget] = [:],
        credentials: CredentialProvider, configuration: SenderConfiguration = .init(),
        breakerStates: [String: PruningBreaker.State] = [:], certificateNotAfterMs: Int64? = nil,
        bundleId: String? = nil, clock: SenderClock = SystemClock(), sleeper: Sleeper = TaskSleeper(),
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
        logger: Logger = Logger(label: "PushSender")
    ) throws(SenderError) {
        if let notAfter = certificateNotAfterMs, notAfter <= clock.nowMs() {
            throw SenderError(.certificateExpired, "client certificate expired on \(Self.formatDate(notAfter)); renew it in Apple's developer portal")
        }
        guard CurlGlobal.initialized else { throw SenderError(.transport, "curl_global_init failed") }
        self.primary = target
        self.byEnvironment = byEnvironment
        self.bundleId = bundleId
        self.credentials = credentials
        self.configuration = configuration
        core = SenderCore(
            configuration: configuration, metrics: metrics, clock: clock, sleeper: sleeper, random: random, logger: logger)
        self.identity = credentials.tlsIdentity
        shared = Mutex(Shared(storedBreakers: breakerStates))
    }

    /// Creates a sender for an app's configured APNs endpoint; with Apple's endpoints, items carrying their token's environment go to the production or sandbox host accordingly. The
    /// app's own settings (``SenderConfiguration/applying(_:)``) override `configuration`. Throws
    /// ``SenderError/Code/configuration`` for an app without APNs.
    public convenience init(
        app: AppSettings, simulator: SimulatorSettings?, credentials: CredentialProvider,
        configuration: SenderConfiguration = .init(), breakerStates: [String: PruningBreaker.State] = [:],
        certificateNotAfterMs: Int64? = nil, logger: Logger = Logger(label: "PushSender")
    ) throws(SenderError) {
        guard let apns = app.apns else { throw SenderError(.configuration, "the app has no apns service") }
        let target = SenderTarget.forEndpoint(apns.endpoint, caFile: apns.caFile, simulator: simulator)
        var routes: [APNsEnvironment: SenderTarget] = [:]
        if apns.endpoint == .production || apns.endpoint == .development {
            routes[.production] = SenderTarget.forEndpoint(.production, caFile: apns.caFile, simulator: nil)
            routes[.development] = SenderTarget.forEndpoint(.development, caFile: apns.caFile, simulator: nil)
        }
        try self.init(
            target: target, byEnvironment: routes, credentials: credentials, configuration: configuration.applying(app),
            breakerStates: breakerStates, certificateNotAfterMs: certificateNotAfterMs, bundleId: apns.topic, logger: logger)
    }

    /// Hands one notification to the sender. `onResult` runs once, on a transport thread, when it has its
    /// result (keep it short). `onPruneReleased` runs later if the result was a held BadDeviceToken prune
    /// (``PruneDecision/held``) that the breaker then released during this run.
    public func submit(
        _ item: SendItem, onResult: @escaping @Sendable (DeliveryResult) -> Void,
        onPruneReleased: (@Sendable (DeviceToken) -> Void)? = nil
    ) {
        var item = item
        if item.request.topic.isEmpty, let bundleId { item.request.topic = item.request.pushType.topic(bundleId: bundleId) }
        let job = core.start(item, onResult: onResult, onPruneReleased: onPruneReleased)
        dispatch(job)
    }

    /// Sends one notification and waits for its result (retries included).
    public func send(_ request: NotificationRequest, environment: APNsEnvironment? = nil) async -> DeliveryResult {
        await withCheckedContinuation { (c: CheckedContinuation<DeliveryResult, Never>) in
            submit(SendItem(request, environment: environment)) { c.resume(returning: $0) }
        }
    }

    /// Sends a sequence of notifications with at most ``SenderConfiguration/window`` in flight, so memory
    /// stays flat for any number of devices. `onResult` runs once per notification on a transport thread.
    /// Returns when every notification has its result. (The delivery engine uses ``submit(_:onResult:onPruneReleased:)``
    /// with its own window, released only once outcomes are committed.)
    public func run<S: Sequence>(
        _ items: S, onResult: @escaping @Sendable (DeliveryResult) -> Void
    ) async where S.Element == SendItem {
        let window = BatchWindow(limit: configuration.inFlightLimit)
        for item in items {
            await window.acquire()
            submit(item) { result in
                onResult(result)
                window.release()
            }
        }
        await window.drain()
    }

    /// ``run(_:onResult:)`` for requests without environment routing.
    public func run<S: Sequence>(
        requests: S, onResult: @escaping @Sendable (DeliveryResult) -> Void
    ) async where S.Element == NotificationRequest {
        await run(requests.lazy.map { SendItem($0) }, onResult: onResult)
    }

    /// Counts so far (over the sender's lifetime).
    public var summary: SendSummary { core.summary }

    /// Prepares for a new run on a long-lived sender: endpoints stopped by an outage get a fresh chance (one
    /// probe first), and waiting is allowed again. Credential stops stay: the credentials must change.
    public func beginRun() {
        waiting.beginRun()
        shared.withLock { s in
            for (target, var e) in s.endpoints where e.stop?.kind == .outage {
                e.stop = nil
                s.endpoints[target] = e
            }
        }
    }

    /// The run is stopping: notifications parked for an unreachable endpoint or waiting for a retry come back
    /// at once as ``DeliveryResult/Kind/unsent`` instead of waiting; requests on the wire still finish.
    public func abandonWaiting(_ reason: String) {
        let stop = EndpointStop(.stopping, endpoint: primary.description, message: reason)
        // Stopping first, then the parked ones: an endpoint reads the flag under ``Shared``'s lock before it parks, so
        // whatever it parks after this took its jobs is still drained below.
        let jobs = waiting.abandonAll() + shared.withLock { s -> [TransferJob] in
            var parked: [TransferJob] = []
            for (target, var e) in s.endpoints where !e.parked.isEmpty {
                parked += e.parked
                e.parked.removeAll()
                s.endpoints[target] = e
            }
            return parked
        }
        for job in jobs { finish(job, status: 0, reason: nil, kind: .unsent, stop: stop) }
    }

    /// Ends a run on a long-lived sender: BadDeviceToken prunes still held are discarded (the endpoint never
    /// proved healthy). Returns how many were discarded.
    @discardableResult
    public func endRun() -> Int {
        shared.withLock { s in
            var discarded = 0
            for (target, var e) in s.endpoints where !e.held.isEmpty {
                discarded += e.held.count
                e.held.removeAll()
                s.endpoints[target] = e
            }
            return discarded
        }
    }

    /// Each endpoint used so far: reachable, stopped, breaker tripped (for `/metrics`).
    public var endpointConditions: [EndpointCondition] {
        shared.withLock { s in
            s.endpoints.values.map { e in
                EndpointCondition(
                    endpoint: e.target.description, reachable: e.outage == nil && e.stop == nil, stopped: e.stop != nil,
                    breakerTripped: e.breaker.state.tripped)
            }.sorted { $0.endpoint < $1.endpoint }
        }
    }

    /// Each endpoint's pruning-breaker state (keyed by endpoint URL), to persist for the next run.
    public var breakerStates: [String: PruningBreaker.State] {
        shared.withLock { s in
            var states = s.storedBreakers
            for (target, e) in s.endpoints { states[target.description] = e.breaker.state }
            return states
        }
    }

    /// Endpoints whose pruning breaker is tripped now.
    public var trippedEndpoints: [String] {
        shared.withLock { s in s.endpoints.filter { $0.value.breaker.tripped }.map(\.key.description).sorted() }
    }

    /// Waits for requests on the wire, discards held prunes and stops the transport threads.
    public func shutdown() async {
        abandonWaiting("the sender is shutting down")
        let transports = shared.withLock { s in s.endpoints.values.flatMap(\.transports) }
        for transport in transports { await transport.stop() }
        endRun()
    }

    /// The endpoint target for an item: its environment's host when routing applies, else the configured one.
    func target(for environment: APNsEnvironment?) -> SenderTarget {
        environment.flatMap { byEnvironment[$0] } ?? primary
    }

    static func formatDate(_ ms: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: Date(timeIntervalSince1970: Double(ms) / 1000))
    }
}

extension APNsSender: DeliverySender {
    /// ``SenderConfiguration/inFlightLimit``.
    public var inFlightLimit: Int { configuration.inFlightLimit }
}
