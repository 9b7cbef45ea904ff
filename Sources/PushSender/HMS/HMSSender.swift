import Foundation
import Logging
import PushCore
import Synchronization

/// Sends notifications to HMS Core devices through Huawei Push Kit behind the engine's ``DeliverySender`` seam, with
/// the semantics of the FCM sender (docs/hms.md, "The sender"):
/// - each notification is mapped once (``HMSPayload``: Apple-only push types, and alerts without a title when the app
///   has no default title, are not sent, `.rejected`, status 0, with the reason) into
///   `POST /v1/{clientId}/messages:send` for the device's one token; every attempt resends the same body;
/// - `Authorization: Bearer` carries the one access token of the client credentials (``AccessTokenCache``), shared
///   by every connection and renewed before it expires; an expired or refused token (401, `80200003` or `80200001`)
///   is marked refused (``AccessTokenCache/rejected(_:)``) and that notification is resent with the renewed one —
///   once, or again whenever the refused token was half spent (an expiry race); refused again, it is a credential
///   failure; a grant Huawei refuses stops the app's HMS sending with its `error_description`;
/// - answers go through ``HMSAnswerRule``: accepted; `80300007` (or our token among a partial success's
///   `illegal_tokens`) `.tokenDead`; other codes `.rejected`; 503 flow control, 429 and 5xx retried with
///   ``BackoffPolicy`` (no sooner than `Retry-After`), then `.deferred`;
/// - `configuration.connections` HTTP/2 connections to Push Kit, used in turn; drops, outages and stops as FCM's;
/// - a ``PruningBreaker`` (persisted under ``breakerKey``) decides the prunes of `80300007`: credentials of another
///   app make Push Kit call every token invalid, and one broadcast must not delete every HMS device of the app.
///
/// One token per request, by decision (docs/hms.md, "Why one token per request"): Push Kit takes up to 1,000 tokens
/// in one message, but our notifications differ per device (locale, per-device ids and the engine's outcome per
/// token), HTTP/2 already multiplexes a thousand requests on a connection, and a per-token answer keeps the
/// duplicate bound after kill -9 what it is for every other service (at most the window in flight).
public final class HMSSender: DeliverySender, Sendable {
    public let configuration: SenderConfiguration
    /// ``SenderConfiguration/inFlightLimit``.
    public var inFlightLimit: Int { configuration.inFlightLimit }
    public let metrics = SenderMetrics()
    /// The client credentials: the client ID names the send URL.
    public let credentials: HMSClientCredentials
    /// The app's one access token, shared by every connection.
    public let tokens: AccessTokenCache
    /// How the app's notifications are shaped (default title, badge class, category).
    public let settings: HMSSettings
    /// Push Kit's host (Huawei's, the simulator, a URL).
    public let target: SenderTarget
    /// `https://host:port/v1/{clientId}/messages:send`.
    public let sendURL: String
    /// The sender skeleton every service shares (counts, retries, stops, the last step).
    let core: SenderCore
    var clock: SenderClock { core.clock }
    var logger: Logger { core.logger }
    let shared: Mutex<Shared>
    /// Notifications waiting out a retry or reconnect backoff, or a grant, and the run's stopping flag.
    var waiting: WaitingRoom { core.waiting }

    /// Everything mutable, behind one lock. Callbacks never run while it is held.
    struct Shared {
        /// The connections, made at the first send (empty when curl could not be set up: then `stop` is set).
        var transports: [Transport]?
        /// The next connection to use.
        var next = 0
        var stop: EndpointStop?
        /// Since when Push Kit has been unreachable (its first failed connect or grant), nil while it answers.
        var unreachableSinceMs: Int64?
        /// The header list of the current access token: every request shares it until the token changes.
        var headers: (token: String, list: HeaderList)?
        /// Decides the prunes of suspect answers (80300007).
        var breaker: PruningBreaker
        /// Suspect results whose prune waits for the breaker to be confident (released or discarded).
        var held: [TransferJob] = []
    }

    /// - Parameters:
    ///   - credentials: the client credentials (its client ID names the URL).
    ///   - tokens: its access tokens (``AccessTokenCache/init(clientCredentials:caFile:proxy:timeoutMs:now:)``).
    ///   - settings: the app's `hms` settings (payload shaping).
    ///   - target: Push Kit's host, e.g. ``HMSSender/productionTarget``.
    ///   - breakerStates: the app's persisted pruning breakers; this sender continues the one under ``breakerKey``.
    public init(
        credentials: HMSClientCredentials, tokens: AccessTokenCache, settings: HMSSettings, target: SenderTarget,
        configuration: SenderConfiguration = .init(), breakerStates: [String: PruningBreaker.State] = [:],
        clock: SenderClock = SystemClock(), sleeper: Sleeper = TaskSleeper(),
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }, logger: Logger = Logger(label: "PushSender.HMS")
    ) throws(SenderError) {
        guard CurlGlobal.initialized else { throw SenderError(.transport, "curl_global_init failed") }
        self.credentials = credentials
        self.tokens = tokens
        self.settings = settings
        self.target = target
        sendURL = "\(target)/v1/\(FormEncoding.escaped(credentials.clientId))/messages:send"
        self.configuration = configuration
        shared = Mutex(Shared(breaker: PruningBreaker(
            consecutive: configuration.breakerConsecutive, ratio: configuration.breakerRatio,
            minimumAnswers: configuration.breakerMinimumAnswers, state: breakerStates[sendURL] ?? .init())))
        core = SenderCore(
            configuration: configuration, metrics: metrics, clock: clock, sleeper: sleeper, random: random, logger: logger)
    }

    /// Huawei's Push Kit host.
    public static let productionTarget = SenderTarget(host: HMSSettings.productionHost, port: 443)

    /// The Push Kit host an app's `hms.endpoint` names (the simulator's as for APNs, trusting `<certificates>/ca.pem`).
    public static func target(for settings: HMSSettings, simulator: SimulatorSettings?) -> SenderTarget {
        switch settings.endpoint {
        case .production: SenderTarget(host: productionTarget.host, port: 443, caFile: settings.caFile)
        case .simulator: SenderTarget.forEndpoint(.simulator, caFile: settings.caFile, simulator: simulator)
        case .url(let host, let port): SenderTarget(host: host, port: port, caFile: settings.caFile)
        }
    }

    /// Where an app's grants go: Huawei's OAuth host in production, else the Push Kit host's `/oauth2/v3/token` (the
    /// simulator's), so a development secret is never posted to Huawei.
    public static func tokenURL(for settings: HMSSettings, target: SenderTarget) -> String {
        settings.endpoint == .production ? HMSSettings.productionTokenURL : "\(target)\(HMSSettings.tokenPath)"
    }

    public func submit(
        _ item: SendItem, onResult: @escaping @Sendable (DeliveryResult) -> Void,
        onPruneReleased: (@Sendable (DeviceToken) -> Void)?
    ) {
        let job = core.start(item, onResult: onResult, onPruneReleased: onPruneReleased)
        guard let token = item.registrationToken else {
            finish(job, status: 0, reason: "not an HMS device: the item has no push token", kind: .rejected)
            return
        }
        let request = item.request
        switch HMSPayload.map(
            apnsPayload: request.payload, pushType: request.pushType, priority: request.priority, expiration: request.expiration,
            collapseId: request.collapseId, token: token, settings: settings, nowMs: clock.nowMs())
        {
        case .skip(let reason):
            finish(job, status: 0, reason: reason, kind: .rejected)
        case .send(let body):
            job.prepared = PreparedRequest(url: sendURL, headers: HeaderList(), body: body)
            dispatch(job)
        }
    }

    public var summary: SendSummary { core.summary }

    /// The key of this sender's pruning breaker among the app's persisted ones: the send URL (the host and the client
    /// ID).
    public var breakerKey: String { sendURL }

    /// The pruning breaker's state under ``breakerKey``, to persist for the next run.
    public var breakerStates: [String: PruningBreaker.State] { [breakerKey: shared.withLock { $0.breaker.state }] }
    /// ``breakerKey`` while the breaker keeps suspect tokens.
    public var trippedEndpoints: [String] { shared.withLock { $0.breaker.tripped } ? [breakerKey] : [] }

    public var endpointConditions: [EndpointCondition] {
        shared.withLock { s in
            guard s.transports != nil else { return [] }
            return [EndpointCondition(
                endpoint: target.description, reachable: s.unreachableSinceMs == nil && s.stop == nil, stopped: s.stop != nil,
                breakerTripped: s.breaker.tripped)]
        }
    }

    /// A stop by an outage gets a fresh chance; a credential stop stays (the credentials must change).
    public func beginRun() {
        waiting.beginRun()
        shared.withLock { s in
            if s.stop?.kind == .outage {
                s.stop = nil
                s.unreachableSinceMs = nil
            }
        }
    }

    public func abandonWaiting(_ reason: String) {
        for job in waiting.abandonAll() {
            finish(job, status: 0, reason: nil, kind: .unsent, stop: EndpointStop(.stopping, endpoint: target.description, message: reason))
        }
    }

    /// Discards the prunes still held (Push Kit never became confidently healthy this run): those tokens are kept.
    @discardableResult public func endRun() -> Int {
        shared.withLock { s in
            defer { s.held.removeAll() }
            return s.held.count
        }
    }

    public func shutdown() async {
        abandonWaiting("the sender is shutting down")
        let transports = shared.withLock { $0.transports ?? [] }
        for transport in transports { await transport.stop() }
    }
}
