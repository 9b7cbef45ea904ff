import Foundation
import Logging
import PushCore
import Synchronization

/// Sends notifications to Android devices through FCM HTTP v1 behind the engine's ``DeliverySender`` seam, with the
/// same semantics as the APNs ``APNsSender`` and the ``WebPushSender`` (docs/fcm.md, "The sender"):
/// - each notification is mapped once (``FCMPayload``: Apple-only push types are not sent, `.rejected`, status 0,
///   with its reason) into `POST /v1/projects/{project_id}/messages:send`; every attempt resends the same body;
/// - `Authorization: Bearer` carries the one access token of the service account (``AccessTokenCache``), shared by
///   every connection: renewed before it expires, never more than once per renewal period; a 401 `UNAUTHENTICATED`
///   marks the token refused (``AccessTokenCache/rejected(_:)``) and resends that notification with the renewed one;
///   refused again, it is a credential failure unless the refused token was half spent (an expiry race,
///   ``AccessTokenCache/isHalfSpent(_:)``); a grant the token endpoint refuses stops the app's FCM sending with its `error_description`;
/// - answers go through ``FCMAnswerRule``: accepted; `UNREGISTERED` / `SENDER_ID_MISMATCH` / an invalid token
///   `.tokenDead`; other 4xx `.rejected`; 429/5xx retried with ``BackoffPolicy``, no sooner than
///   `Retry-After`, then `.deferred`; a credential failure stops FCM for the app (its notifications come back
///   `.unsent`, naming the error);
/// - `configuration.connections` HTTP/2 connections to the FCM host (each a ``Transport``, multiplexed up to its
///   window), used in turn; a dropped connection resends at once (possibly duplicated when the body left); an
///   unreachable host is retried with the reconnect backoff until the outage limit, then stops (`.unsent`) — all of it
///   ``BearerTokenSender``'s, shared with Push Kit's sender;
/// - a ``PruningBreaker`` (the APNs sender's, same thresholds, persisted under ``breakerKey``) decides the prunes of
///   `SENDER_ID_MISMATCH` and invalid-token answers: a service account of the wrong Firebase project gets
///   `SENDER_ID_MISMATCH` for every token, and one broadcast must not delete every Android device of the app. Such
///   prunes are held until FCM is confidently healthy, kept once the breaker trips. `UNREGISTERED` is per-device
///   evidence (APNs' 410): pruned at once.
public final class FCMSender: DeliverySender, Sendable {
    public var configuration: SenderConfiguration { link.configuration }
    /// ``SenderConfiguration/inFlightLimit``.
    public var inFlightLimit: Int { configuration.inFlightLimit }
    public var metrics: SenderMetrics { link.metrics }
    /// The service account: its `project_id` names the send URL.
    public let account: FCMServiceAccount
    /// The account's one access token, shared by every connection.
    public var tokens: AccessTokenCache { link.tokens }
    /// The FCM host (Google's, the simulator, a URL).
    public var target: SenderTarget { link.target }
    /// `https://host:port/v1/projects/{project_id}/messages:send`.
    public var sendURL: String { link.sendURL }
    /// Connections, token, stops, retries and the breaker: what every bearer-token service shares.
    let link: BearerTokenSender
    var clock: SenderClock { link.clock }

    /// - Parameters:
    ///   - account: the service account (its `project_id` names the URL).
    ///   - tokens: its access tokens (``AccessTokenCache/init(serviceAccount:caFile:proxy:timeoutMs:now:)``).
    ///   - target: the FCM host, e.g. ``FCMSender/productionTarget``.
    ///   - breakerStates: the app's persisted pruning breakers; this sender continues the one under ``breakerKey``.
    public init(
        account: FCMServiceAccount, tokens: AccessTokenCache, target: SenderTarget, configuration: SenderConfiguration = .init(),
        breakerStates: [String: PruningBreaker.State] = [:],
        clock: SenderClock = SystemClock(), sleeper: Sleeper = TaskSleeper(),
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }, logger: Logger = Logger(label: "PushSender.FCM")
    ) throws(SenderError) {
        guard CurlGlobal.initialized else { throw SenderError(.transport, "curl_global_init failed") }
        self.account = account
        link = BearerTokenSender(
            tokens: tokens, target: target,
            sendURL: "\(target)/v1/projects/\(FCMServiceAccount.formEscaped(account.projectId))/messages:send",
            service: .fcm, serviceName: "FCM", credentialOwner: account.clientEmail, threadName: "sender-fcm",
            configuration: configuration, metrics: SenderMetrics(), breakerStates: breakerStates, clock: clock, sleeper: sleeper,
            random: random, logger: logger)
        link.readAnswers { [unowned self] job, response in self.handle(job, response) }
    }

    /// Google's FCM host.
    public static let productionTarget = SenderTarget(host: FCMSettings.productionHost, port: 443)

    /// The FCM host an app's `fcm.endpoint` names (the simulator's as for APNs, trusting `<certificates>/ca.pem`).
    public static func target(for settings: FCMSettings, simulator: SimulatorSettings?) -> SenderTarget {
        switch settings.endpoint {
        case .production: SenderTarget(host: productionTarget.host, port: 443, caFile: settings.caFile)
        case .simulator: SenderTarget.forEndpoint(.simulator, caFile: settings.caFile, simulator: simulator)
        case .url(let host, let port): SenderTarget(host: host, port: port, caFile: settings.caFile)
        }
    }

    /// Where an app's grants go: the account's `token_uri` in production, else the FCM host's `/token` (the simulator's
    /// token endpoint), so a development account never posts its assertion to Google.
    public static func tokenURI(for settings: FCMSettings, account: FCMServiceAccount, target: SenderTarget) -> String {
        settings.endpoint == .production ? account.tokenURI : "\(target)\(FCMSettings.tokenPath)"
    }

    public func submit(
        _ item: SendItem, onResult: @escaping @Sendable (DeliveryResult) -> Void,
        onPruneReleased: (@Sendable (DeviceToken) -> Void)?
    ) {
        let job = link.start(item, onResult: onResult, onPruneReleased: onPruneReleased)
        guard let token = item.registrationToken else {
            link.finish(job, status: 0, reason: "not an Android device: the item has no FCM registration token", kind: .rejected)
            return
        }
        let request = item.request
        switch FCMPayload.map(
            apnsPayload: request.payload, pushType: request.pushType, priority: request.priority, expiration: request.expiration,
            collapseId: request.collapseId, token: token, nowMs: clock.nowMs())
        {
        case .skip(let reason): link.finish(job, status: 0, reason: reason, kind: .rejected)
        case .send(let body): link.submit(job, body: body)
        }
    }

    public var summary: SendSummary { link.summary }

    /// The key of this sender's pruning breaker among the app's persisted ones: the send URL (the FCM host and the
    /// project), never an APNs endpoint's `https://host:port` even when the simulator serves both.
    public var breakerKey: String { link.breakerKey }
    /// The pruning breaker's state under ``breakerKey``, to persist for the next run.
    public var breakerStates: [String: PruningBreaker.State] { link.breakerStates }
    /// ``breakerKey`` while the breaker keeps suspect tokens.
    public var trippedEndpoints: [String] { link.trippedEndpoints }
    public var endpointConditions: [EndpointCondition] { link.endpointConditions }

    /// A stop by an outage gets a fresh chance; a credential stop stays (the service account must change).
    public func beginRun() { link.beginRun() }
    public func abandonWaiting(_ reason: String) { link.abandonWaiting(reason) }
    /// Discards the prunes still held (FCM never became confidently healthy this run): those tokens are kept.
    @discardableResult public func endRun() -> Int { link.endRun() }
    public func shutdown() async { await link.shutdown() }
}
