import Foundation
import Logging
import PushCore
import Synchronization

/// Sends notifications to HarmonyOS NEXT devices through Huawei Push Kit's scenario API behind the engine's
/// ``DeliverySender`` seam, with the semantics of the HMS and FCM senders (docs/harmonyos.md, "The sender"):
/// - each notification is mapped once (``HarmonyOSPayload``: an alert is push-type 0 with the app's category, a
///   background push push-type 6; Apple-only push types and alerts without a title when the app has no default
///   title are not sent, `.rejected`, status 0, with the reason) into `POST /v3/{projectId}/messages:send` for the
///   device's one token, with its `push-type` header; every attempt resends the same body;
/// - `Authorization: Bearer` carries the service account's JWT itself (``HarmonyOSServiceAccount``, no token
///   exchange), one shared by every connection in one ``AccessTokenCache`` and re-signed before it expires; a refused
///   one (401, `80200001`, `80200003`) is re-signed and that notification resent, once; refused again, it is a
///   credential failure that stops the app's HarmonyOS sending;
/// - answers go through ``HarmonyOSAnswerRule``; connections, drops, outages, stops, retries and the pruning breaker
///   (persisted under ``breakerKey``) are ``BearerTokenSender``'s, shared with FCM's and HMS's senders.
///
/// One token per request, as for HMS Core (docs/hms.md, "Why one token per request").
public final class HarmonyOSSender: DeliverySender, Sendable {
    public var configuration: SenderConfiguration { link.configuration }
    /// ``SenderConfiguration/inFlightLimit``.
    public var inFlightLimit: Int { configuration.inFlightLimit }
    public var metrics: SenderMetrics { link.metrics }
    /// The app's settings (project, category, default title).
    public let settings: HarmonyOSSettings
    /// The app's one JWT, shared by every connection.
    public var tokens: AccessTokenCache { link.tokens }
    /// Push Kit's host (Huawei's, the simulator, a URL).
    public var target: SenderTarget { link.target }
    /// `https://host:port/v3/{projectId}/messages:send`.
    public var sendURL: String { link.sendURL }
    let link: BearerTokenSender
    var clock: SenderClock { link.clock }

    /// - Parameters:
    ///   - settings: the app's `harmonyos` settings (its project ID names the URL).
    ///   - tokens: its JWTs (``AccessTokenCache/init(harmonyOSAccount:now:)``).
    ///   - owner: what a refusal names (the service account's `sub_account`).
    ///   - target: Push Kit's host, e.g. ``HarmonyOSSender/productionTarget``.
    public init(
        settings: HarmonyOSSettings, tokens: AccessTokenCache, owner: String, target: SenderTarget,
        configuration: SenderConfiguration = .init(), breakerStates: [String: PruningBreaker.State] = [:],
        clock: SenderClock = SystemClock(), sleeper: Sleeper = TaskSleeper(),
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
        logger: Logger = Logger(label: "PushSender.HarmonyOS")
    ) throws(SenderError) {
        guard CurlGlobal.initialized else { throw SenderError(.transport, "curl_global_init failed") }
        self.settings = settings
        link = BearerTokenSender(
            tokens: tokens, target: target, sendURL: "\(target)/v3/\(FormEncoding.escaped(settings.projectId))/messages:send",
            service: .harmonyos, serviceName: "Push Kit (HarmonyOS)", credentialOwner: "service account \(owner)",
            threadName: "sender-harmonyos", configuration: configuration, metrics: SenderMetrics(), breakerStates: breakerStates,
            clock: clock, sleeper: sleeper, random: random, logger: logger)
        link.readAnswers { [unowned self] job, response in self.handle(job, response) }
    }

    /// Huawei's Push Kit host.
    public static let productionTarget = SenderTarget(host: HarmonyOSSettings.productionHost, port: 443)

    /// The Push Kit host an app's `harmonyos.endpoint` names (the simulator's trusting `<certificates>/ca.pem`).
    public static func target(for settings: HarmonyOSSettings, simulator: SimulatorSettings?) -> SenderTarget {
        switch settings.endpoint {
        case .production: SenderTarget(host: productionTarget.host, port: 443, caFile: settings.caFile)
        case .simulator: SenderTarget.forEndpoint(.simulator, caFile: settings.caFile, simulator: simulator)
        case .url(let host, let port): SenderTarget(host: host, port: port, caFile: settings.caFile)
        }
    }

    public func submit(
        _ item: SendItem, onResult: @escaping @Sendable (DeliveryResult) -> Void,
        onPruneReleased: (@Sendable (DeviceToken) -> Void)?
    ) {
        let job = link.start(item, onResult: onResult, onPruneReleased: onPruneReleased)
        guard let token = item.registrationToken else {
            link.finish(job, status: 0, reason: "not a HarmonyOS device: the item has no push token", kind: .rejected)
            return
        }
        let request = item.request
        switch HarmonyOSPayload.map(
            apnsPayload: request.payload, pushType: request.pushType, expiration: request.expiration,
            collapseId: request.collapseId, token: token, settings: settings, nowMs: clock.nowMs())
        {
        case .skip(let reason): link.finish(job, status: 0, reason: reason, kind: .rejected)
        case .send(let body, let pushType): link.submit(job, body: body, headers: ["push-type: \(pushType)"])
        }
    }

    public var summary: SendSummary { link.summary }

    /// The key of this sender's pruning breaker among the app's persisted ones: the send URL (host and project).
    public var breakerKey: String { link.breakerKey }
    public var breakerStates: [String: PruningBreaker.State] { link.breakerStates }
    public var trippedEndpoints: [String] { link.trippedEndpoints }
    public var endpointConditions: [EndpointCondition] { link.endpointConditions }

    public func beginRun() { link.beginRun() }
    public func abandonWaiting(_ reason: String) { link.abandonWaiting(reason) }
    @discardableResult public func endRun() -> Int { link.endRun() }
    public func shutdown() async { await link.shutdown() }
}

extension HarmonyOSSender {
    /// Applies ``HarmonyOSAnswerRule`` to one attempt's answer, on the transport thread that carried it.
    func handle(_ job: TransferJob, _ response: TransferResponse) {
        let answer = HarmonyOSAnswer(
            status: response.status, body: response.body, retryAfterMs: response.retryAfter?.delayMs(nowMs: clock.nowMs()))
        // A refused or expired JWT (80200001, 80200003, a 401): re-signed and the notification resent, once.
        let refusedToken = answer.code == HarmonyOSAnswerRule.Code.authFailed || answer.code == HarmonyOSAnswerRule.Code.authExpired
            || answer.status == 401
        if refusedToken, link.renewedAfterRefusal(job) { return }
        let reason = answer.code ?? (answer.status == 503 ? HarmonyOSAnswerRule.Code.trafficControl : "HTTP \(answer.status)")
        let kind = HarmonyOSAnswerRule.verdict(for: answer, token: job.item.registrationToken).kind
        // Every invalid-token answer is suspect (another project's credentials make every token `noRight`): the
        // breaker holds, releases or keeps it.
        let prune = link.breakerDecision(
            job, tokenDead: kind == .tokenDead, suspect: kind == .tokenDead,
            request: PruneRequest(service: answer.code ?? HarmonyOSAnswerRule.Code.invalidTokens, status: answer.status),
            tripped: "pruning breaker tripped: too many invalid-token answers from Push Kit (HarmonyOS); those tokens are kept, not deleted. Check that the service account and projectId belong to the AppGallery Connect project its devices' app is in.")
        let message = answer.message.map { String($0.prefix(200)) }
        link.conclude(
            job, kind, status: response.status, reason: reason, prune: prune, message: message, retryAfterMs: answer.retryAfterMs,
            refusal: "Push Kit refused project \(settings.projectId)'s sends (HTTP \(answer.status) \(reason)): \(message ?? "no message")")
    }

    /// The HarmonyOS sender for an app's `apps.ID.harmonyos`: its service-account key file (refused like every secret
    /// file; an unreadable or incomplete one is a ``CredentialError`` naming it), one ``AccessTokenCache`` of its JWTs,
    /// and the Push Kit host of its endpoint.
    public static func forApp(
        _ harmonyos: HarmonyOSSettings, in configuration: PushConfiguration, settings: SenderConfiguration = .init(),
        breakerStates: [String: PruningBreaker.State] = [:], logger: Logger = Logger(label: "PushSender.HarmonyOS")
    ) throws -> HarmonyOSSender {
        let account = try HarmonyOSServiceAccount(path: harmonyos.serviceAccount, configurationKey: "harmonyos.serviceAccount")
        return try HarmonyOSSender(
            settings: harmonyos, tokens: AccessTokenCache(harmonyOSAccount: account), owner: account.subAccount,
            target: target(for: harmonyos, simulator: configuration.simulator), configuration: settings,
            breakerStates: breakerStates, logger: logger)
    }
}
