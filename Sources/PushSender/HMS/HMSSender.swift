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
/// - `configuration.connections` HTTP/2 connections to Push Kit, used in turn; drops, outages, stops, the token and
///   the breaker's bookkeeping are ``BearerTokenSender``'s, shared with FCM's sender;
/// - a ``PruningBreaker`` (persisted under ``breakerKey``) decides the prunes of `80300007`: credentials of another
///   app make Push Kit call every token invalid, and one broadcast must not delete every HMS device of the app.
///
/// One token per request, by decision (docs/hms.md, "Why one token per request"): Push Kit takes up to 1,000 tokens
/// in one message, but our notifications differ per device (locale, per-device ids and the engine's outcome per
/// token), HTTP/2 already multiplexes a thousand requests on a connection, and a per-token answer keeps the
/// duplicate bound after kill -9 what it is for every other service (at most the window in flight).
public final class HMSSender: DeliverySender, Sendable {
    public var configuration: SenderConfiguration { link.configuration }
    /// ``SenderConfiguration/inFlightLimit``.
    public var inFlightLimit: Int { configuration.inFlightLimit }
    public var metrics: SenderMetrics { link.metrics }
    /// The client credentials: the client ID names the send URL.
    public let credentials: HMSClientCredentials
    /// The app's one access token, shared by every connection.
    public var tokens: AccessTokenCache { link.tokens }
    /// How the app's notifications are shaped (default title, badge class, category).
    public let settings: HMSSettings
    /// Push Kit's host (Huawei's, the simulator, a URL).
    public var target: SenderTarget { link.target }
    /// `https://host:port/v1/{clientId}/messages:send`.
    public var sendURL: String { link.sendURL }
    /// Connections, token, stops, retries and the breaker: what every bearer-token service shares.
    let link: BearerTokenSender
    var clock: SenderClock { link.clock }

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
        self.settings = settings
        link = BearerTokenSender(
            tokens: tokens, target: target, sendURL: "\(target)/v1/\(FormEncoding.escaped(credentials.clientId))/messages:send",
            service: .hms, serviceName: "Push Kit", credentialOwner: "client \(credentials.clientId)", threadName: "sender-hms",
            configuration: configuration, metrics: SenderMetrics(), breakerStates: breakerStates, clock: clock, sleeper: sleeper,
            random: random, logger: logger)
        link.readAnswers { [unowned self] job, response in self.handle(job, response) }
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
        let job = link.start(item, onResult: onResult, onPruneReleased: onPruneReleased)
        guard let token = item.registrationToken else {
            link.finish(job, status: 0, reason: "not an HMS device: the item has no push token", kind: .rejected)
            return
        }
        let request = item.request
        switch HMSPayload.map(
            apnsPayload: request.payload, pushType: request.pushType, priority: request.priority, expiration: request.expiration,
            collapseId: request.collapseId, token: token, settings: settings, nowMs: clock.nowMs())
        {
        case .skip(let reason): link.finish(job, status: 0, reason: reason, kind: .rejected)
        case .send(let body): link.submit(job, body: body)
        }
    }

    public var summary: SendSummary { link.summary }

    /// The key of this sender's pruning breaker among the app's persisted ones: the send URL (the host and the client
    /// ID).
    public var breakerKey: String { link.breakerKey }
    /// The pruning breaker's state under ``breakerKey``, to persist for the next run.
    public var breakerStates: [String: PruningBreaker.State] { link.breakerStates }
    /// ``breakerKey`` while the breaker keeps suspect tokens.
    public var trippedEndpoints: [String] { link.trippedEndpoints }
    public var endpointConditions: [EndpointCondition] { link.endpointConditions }

    /// A stop by an outage gets a fresh chance; a credential stop stays (the credentials must change).
    public func beginRun() { link.beginRun() }
    public func abandonWaiting(_ reason: String) { link.abandonWaiting(reason) }
    /// Discards the prunes still held (Push Kit never became confidently healthy this run): those tokens are kept.
    @discardableResult public func endRun() -> Int { link.endRun() }
    public func shutdown() async { await link.shutdown() }
}
