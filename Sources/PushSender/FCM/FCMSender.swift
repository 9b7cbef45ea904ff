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
///   unreachable host is retried with the reconnect backoff until the outage limit, then stops (`.unsent`);
/// - a ``PruningBreaker`` (the APNs sender's, same thresholds, persisted under ``breakerKey``) decides the prunes of
///   `SENDER_ID_MISMATCH` and invalid-token answers: a service account of the wrong Firebase project gets
///   `SENDER_ID_MISMATCH` for every token, and one broadcast must not delete every Android device of the app. Such
///   prunes are held until FCM is confidently healthy, kept once the breaker trips. `UNREGISTERED` is per-device
///   evidence (APNs' 410): pruned at once.
public final class FCMSender: DeliverySender, Sendable {
    public let configuration: SenderConfiguration
    /// ``SenderConfiguration/inFlightLimit``.
    public var inFlightLimit: Int { configuration.inFlightLimit }
    public let metrics = SenderMetrics()
    /// The service account: its `project_id` names the send URL.
    public let account: FCMServiceAccount
    /// The account's one access token, shared by every connection.
    public let tokens: AccessTokenCache
    /// The FCM host (Google's, the simulator, a URL).
    public let target: SenderTarget
    /// `https://host:port/v1/projects/{project_id}/messages:send`.
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
        /// Since when FCM has been unreachable (its first failed connect or grant), nil while it answers.
        var unreachableSinceMs: Int64?
        /// The header list of the current access token: every request shares it until the token changes.
        var headers: (token: String, list: HeaderList)?
        /// Decides the prunes of suspect answers (SENDER_ID_MISMATCH, an invalid token).
        var breaker: PruningBreaker
        /// Suspect results whose prune waits for the breaker to be confident (released or discarded).
        var held: [TransferJob] = []
    }

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
        self.tokens = tokens
        self.target = target
        sendURL = "\(target)/v1/projects/\(FCMServiceAccount.formEscaped(account.projectId))/messages:send"
        self.configuration = configuration
        shared = Mutex(Shared(breaker: PruningBreaker(
            consecutive: configuration.breakerConsecutive, ratio: configuration.breakerRatio,
            minimumAnswers: configuration.breakerMinimumAnswers, state: breakerStates[sendURL] ?? .init())))
        core = SenderCore(
            configuration: configuration, metrics: metrics, clock: clock, sleeper: sleeper, random: random, logger: logger)
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
        let job = core.start(item, onResult: onResult, onPruneReleased: onPruneReleased)
        guard let token = item.registrationToken else {
            finish(job, status: 0, reason: "not an Android device: the item has no FCM registration token", kind: .rejected)
            return
        }
        let request = item.request
        switch FCMPayload.map(
            apnsPayload: request.payload, pushType: request.pushType, priority: request.priority, expiration: request.expiration,
            collapseId: request.collapseId, token: token, nowMs: clock.nowMs())
        {
        case .skip(let reason):
            finish(job, status: 0, reason: reason, kind: .rejected)
        case .send(let body):
            job.prepared = PreparedRequest(url: sendURL, headers: HeaderList(), body: body)
            dispatch(job)
        }
    }

    public var summary: SendSummary { core.summary }

    /// The key of this sender's pruning breaker among the app's persisted ones: the send URL (the FCM host and the
    /// project), never an APNs endpoint's `https://host:port` even when the simulator serves both.
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

    /// A stop by an outage gets a fresh chance; a credential stop stays (the service account must change).
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

    /// Discards the prunes still held (FCM never became confidently healthy this run): those tokens are kept.
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
