import Foundation
import Logging
import PushCore
import Synchronization

/// What every sender that authenticates with one OAuth bearer token per app shares (FCM's access token, Push Kit's):
/// the token taken from one ``AccessTokenCache`` (waiting for the one grant in flight when there is none), the app's
/// connections to the service used in turn with one header list per token, the renewal of a refused token once, the
/// stop (credentials, TLS, outage), the outage clock, retries and deferrals through ``SenderCore``, and the pruning
/// breaker with its held prunes. A service's sender keeps only what is its own: mapping a notification into its
/// request (``submit(_:body:)``) and reading its answers (the `answers` closure, which calls back into the helpers
/// here). One implementation, so a fix to how a token is renewed or an outage ends reaches every such service.
final class BearerTokenSender: Sendable {
    let configuration: SenderConfiguration
    let metrics: SenderMetrics
    /// The app's one token, shared by every connection.
    let tokens: AccessTokenCache
    /// The service's host.
    let target: SenderTarget
    /// Where every request goes.
    let sendURL: String
    /// The result's service.
    let service: PushService
    /// How log lines and stops name the service ("FCM", "Push Kit").
    let serviceName: String
    /// What a refused grant names: the credentials' owner (a service account's email, a client ID).
    let credentialOwner: String
    /// The connections' thread name.
    let threadName: String
    /// Extra request headers every request carries (besides the bearer token and the content type).
    let extraHeaders: [String]
    /// The sender skeleton every service shares (counts, retries, stops, the last step).
    let core: SenderCore
    private let shared: Mutex<Shared>
    /// The service's answer reader, set once by the owning sender before its first send.
    private let answers = Mutex<(@Sendable (TransferJob, TransferResponse) -> Void)?>(nil)

    var clock: SenderClock { core.clock }
    var logger: Logger { core.logger }
    var waiting: WaitingRoom { core.waiting }
    /// The key of the pruning breaker among the app's persisted ones: the send URL.
    var breakerKey: String { sendURL }

    /// Everything mutable, behind one lock. Callbacks never run while it is held.
    private struct Shared {
        /// The connections, made at the first send (empty when curl could not be set up: then `stop` is set).
        var transports: [Transport]?
        /// The next connection to use.
        var next = 0
        var stop: EndpointStop?
        /// Since when the service has been unreachable (its first failed connect or grant), nil while it answers.
        var unreachableSinceMs: Int64?
        /// The header lists of the current token, one per set of a request's own header lines (``submit(_:body:headers:)``;
        /// most services have one, empty): every request with the same lines shares one until the token changes.
        var headers: (token: String, lists: [[String]: HeaderList])?
        /// Decides the prunes of suspect answers.
        var breaker: PruningBreaker
        /// Suspect results whose prune waits for the breaker to be confident (released or discarded).
        var held: [TransferJob] = []
    }

    init(
        tokens: AccessTokenCache, target: SenderTarget, sendURL: String, service: PushService, serviceName: String,
        credentialOwner: String, threadName: String, extraHeaders: [String] = [], configuration: SenderConfiguration,
        metrics: SenderMetrics, breakerStates: [String: PruningBreaker.State], clock: SenderClock, sleeper: Sleeper,
        random: @escaping @Sendable () -> Double, logger: Logger
    ) {
        self.tokens = tokens
        self.target = target
        self.sendURL = sendURL
        self.service = service
        self.serviceName = serviceName
        self.credentialOwner = credentialOwner
        self.threadName = threadName
        self.extraHeaders = extraHeaders
        self.configuration = configuration
        self.metrics = metrics
        shared = Mutex(Shared(breaker: PruningBreaker(
            consecutive: configuration.breakerConsecutive, ratio: configuration.breakerRatio,
            minimumAnswers: configuration.breakerMinimumAnswers, state: breakerStates[sendURL] ?? .init())))
        core = SenderCore(
            configuration: configuration, metrics: metrics, clock: clock, sleeper: sleeper, random: random, logger: logger)
    }

    /// Sets the service's answer reader (once, before the first send: the connections call it on their threads).
    func readAnswers(with reader: @escaping @Sendable (TransferJob, TransferResponse) -> Void) {
        answers.withLock { $0 = reader }
    }

    /// Starts a notification's job.
    func start(
        _ item: SendItem, onResult: @escaping @Sendable (DeliveryResult) -> Void, onPruneReleased: (@Sendable (DeviceToken) -> Void)?
    ) -> TransferJob {
        core.start(item, onResult: onResult, onPruneReleased: onPruneReleased)
    }

    /// Sends `job` with its mapped `body` (every attempt resends the same bytes) and `headers`, header lines of this
    /// request alone (after ``extraHeaders``; HarmonyOS's `push-type`, which differs between an alert and a background
    /// message). Requests with the same lines share one header list per token.
    func submit(_ job: TransferJob, body: [UInt8], headers: [String] = []) {
        job.prepared = PreparedRequest(url: sendURL, headers: HeaderList(), body: body, ownHeaders: headers)
        dispatch(job)
    }

    /// Sends `job` (a first attempt or a retry) on the next connection with the current token, or finishes it unsent
    /// when the service has stopped for this app. Without a fresh token it waits for the one grant in flight.
    func dispatch(_ job: TransferJob) {
        if let token = tokens.freshToken() {
            send(job, token: token)
            return
        }
        guard waiting.park(job) else {
            finish(job, status: 0, reason: nil, kind: .unsent, stop: stoppingStop())
            return
        }
        Task { [self] in
            do {
                let token = try await tokens.token()
                if waiting.release(job) { send(job, token: token) }
            } catch let error as CredentialError {
                guard waiting.release(job) else { return }
                let stop = stop(.credentials, "\(serviceName) access token for \(credentialOwner): \(error.message)")
                finish(job, status: 0, reason: nil, kind: .unsent, error: error.message, stop: stop)
            } catch {
                // No answer from the token endpoint: an outage like an unreachable service host.
                guard waiting.release(job) else { return }
                let message = (error as? TransportError)?.message ?? "\(error)"
                unreachable(job, "the token endpoint did not answer: \(message)")
            }
        }
    }

    /// Hands `job` to a connection with `Authorization: Bearer token`.
    private func send(_ job: TransferJob, token accessToken: AccessTokenCache.Token) {
        job.accessToken = accessToken
        let token = accessToken.value
        let own = job.prepared?.ownHeaders ?? []
        enum Step {
            case send(Transport, HeaderList)
            case unsent(EndpointStop)
        }
        let step = shared.withLock { s -> Step in
            if s.transports == nil { s.transports = makeTransports(&s) }
            if let stop = s.stop { return .unsent(stop) }
            guard let transports = s.transports, !transports.isEmpty else { return .unsent(stoppingStop()) }
            let transport = transports[s.next % transports.count]
            s.next &+= 1
            if s.headers?.token != token { s.headers = (token, [:]) }
            if let list = s.headers?.lists[own] { return .send(transport, list) }
            let list = HeaderList()
            for line in ["Authorization: Bearer \(token)", "Content-Type: application/json; charset=UTF-8"] + extraHeaders + own + ["Expect:"] {
                list.append(line)
            }
            s.headers?.lists[own] = list
            return .send(transport, list)
        }
        switch step {
        case .send(let transport, let headers):
            job.send(on: transport, headers: headers, authorization: token)
        case .unsent(let stop):
            finish(job, status: 0, reason: nil, kind: .unsent, stop: stop)
        }
    }

    /// The app's connections to the service (the lock is held; threads start here).
    private func makeTransports(_ s: inout Shared) -> [Transport] {
        let reader = answers.withLock { $0 }
        var made: [Transport] = []
        for _ in 0..<max(1, configuration.connections) {
            do {
                let transport = try Transport(
                    target: target, identity: nil, configuration: configuration, metrics: metrics, threadName: threadName, runs: core.waiting
                ) { [unowned self] job, response in
                    if let error = response.error {
                        self.handleTransportError(job, error, response)
                    } else {
                        self.answered(job)
                        reader?(job, response)
                    }
                }
                transport.start()
                made.append(transport)
            } catch {
                s.stop = EndpointStop(.credentials, endpoint: target.description, message: "cannot set up curl for \(target): \(error.message)")
                core.recordStop(s.stop!)
                break
            }
        }
        return made
    }

    /// Counts an answer (the service answered: it is reachable) before the service reads it.
    private func answered(_ job: TransferJob) {
        if job.attemptStartedNs > 0 {
            metrics.answered(afterNanoseconds: DispatchTime.now().uptimeNanoseconds &- job.attemptStartedNs)
        }
        shared.withLock { $0.unreachableSinceMs = nil }
        job.attempts += 1
    }

    /// For an answer that refused the job's token (expired early, revoked): renews it and resends the notification with
    /// the new one — once, or again whenever the refused token was half spent (an expiry race, not a refusal:
    /// ``AccessTokenCache/isHalfSpent(_:)``). A job that waited out a retry can meet an expiring token a second time;
    /// that must not stop the service for the app. True when the job was resent.
    func renewedAfterRefusal(_ job: TransferJob) -> Bool {
        guard let token = job.accessToken, !job.refreshedProviderToken || tokens.isHalfSpent(token) else { return false }
        job.refreshedProviderToken = true
        tokens.rejected(token.value)
        dispatch(job)
        return true
    }

    /// Counts one answer in the pruning breaker and decides a dead token's prune (``PruningBreaker/answer(tokenDead:suspect:)``):
    /// a suspect answer (what every token answers when the credentials are another app's) is held, released or kept
    /// by the breaker; per-device evidence is pruned at once. `request` names the prune (the service gives no
    /// timestamp: the store removes the token whatever its registration time); `tripped` is the log line when the
    /// breaker trips.
    func breakerDecision(
        _ job: TransferJob, tokenDead: Bool, suspect: Bool, request: @autoclosure () -> PruneRequest, tripped: String
    ) -> PruneDecision {
        let (decision, change, released, discarded) = shared.withLock { s -> (PruneDecision, PruningBreaker.Change?, [TransferJob], Int) in
            let (prune, change) = s.breaker.answer(tokenDead: tokenDead, suspect: suspect)
            let (released, discarded) = PruningBreaker.settle(change, held: &s.held)
            if change == .tripped { core.recordBreakerTrip(breakerKey) }
            var decision = PruneDecision.none
            if let prune {
                decision = PruneDecision(prune, request())
                if prune == .held { s.held.append(job) }
            }
            return (decision, change, released, discarded)
        }
        if change == .tripped {
            logger.critical("\(tripped)", metadata: ["endpoint": "\(breakerKey)", "heldPrunesDiscarded": "\(discarded)"])
        }
        for held in released { held.onPruneReleased?(held.item.request.token) }
        return decision
    }

    private func handleTransportError(_ job: TransferJob, _ error: TransportError, _ response: TransferResponse) {
        let failure = SenderCore.failure(error, response)
        if failure != .endpointStopped { job.lastError = error.message }
        switch failure {
        case .endpointStopped:
            let stop = shared.withLock { $0.stop } ?? stoppingStop()
            finish(job, status: 0, reason: nil, kind: .unsent, stop: stop)
        case .refused:
            let stop = stop(.credentials, "TLS with \(target) failed: \(error.message)")
            finish(job, status: 0, reason: nil, kind: .unsent, error: error.message, stop: stop)
        case .unreachable:
            unreachable(job, error.message)
        case .dropped:
            if let ending = core.afterDrop(job, error, response, endpoint: target.description) {
                finish(job, status: 0, reason: nil, kind: ending.kind, error: ending.error, stop: ending.stop)
            } else {
                dispatch(job)
            }
        }
    }

    /// The service (or its token endpoint) did not answer: retried with the reconnect backoff until the outage limit,
    /// then the service stops for this app until the next run.
    private func unreachable(_ job: TransferJob, _ message: String) {
        job.lastError = message
        let now = clock.nowMs()
        let since = shared.withLock { s -> Int64 in
            let since = s.unreachableSinceMs ?? now
            s.unreachableSinceMs = since
            return since
        }
        if now - since >= Int64(configuration.outageLimitMs) {
            let stop = stop(
                .outage,
                "\(serviceName) at \(target) unreachable for \((now - since + 500) / 1000) s (outage limit \(configuration.outageLimitMs / 1000) s): \(message)")
            finish(job, status: 0, reason: nil, kind: .unsent, error: message, stop: stop)
            return
        }
        job.dropped += 1
        retryOrDefer(job, status: 0, reason: nil, delay: core.reconnectDelay(job), counts: false, retryAfterMs: nil)
    }

    /// ``SenderCore/retryOrDefer(_:endpoint:asker:delay:counts:retryAfterMs:dispatch:)`` for this service.
    func retryOrDefer(_ job: TransferJob, status: Int, reason: String?, delay: Int?, counts: Bool, retryAfterMs: Int64?) {
        guard let ending = core.retryOrDefer(
            job, endpoint: target.description, asker: serviceName, delay: delay, counts: counts, retryAfterMs: retryAfterMs,
            dispatch: { [unowned self] in self.dispatch($0) })
        else { return }
        finish(job, status: status, reason: reason, kind: ending.kind, error: ending.error, stop: ending.stop)
    }

    /// Stops sending to the service for this app (credentials, TLS, outage): everything sent later comes back unsent.
    /// Returns the stop in force (the first one wins).
    @discardableResult
    func stop(_ kind: EndpointStop.Kind, _ message: String) -> EndpointStop {
        let (stop, transports) = shared.withLock { s -> (EndpointStop, [Transport]) in
            if let existing = s.stop { return (existing, []) }
            let stop = EndpointStop(kind, endpoint: target.description, message: message)
            s.stop = stop
            core.recordStop(stop)
            return (stop, s.transports ?? [])
        }
        if !transports.isEmpty {
            logger.error("stopping \(serviceName) sending", metadata: ["endpoint": "\(target)", "reason": "\(message)"])
        }
        for transport in transports { transport.cancel(TransportError.endpointStopped(message)) }
        return stop
    }

    func stoppingStop() -> EndpointStop { core.stoppingStop(target.description) }

    /// Ends or retries `job` by its answer's verdict: accepted, dead (with `prune`), rejected (with the service's
    /// `message`), a credential failure (stops the service for the app, `refusal` the stop's message) or retried.
    func conclude(
        _ job: TransferJob, _ kind: AnswerVerdict.Kind, status: Int, reason: String, prune: PruneDecision, message: String?,
        retryAfterMs: Int64?, refusal: @autoclosure () -> String
    ) {
        switch kind {
        case .accepted:
            finish(job, status: status, reason: nil, kind: .accepted)
        case .tokenDead:
            finish(job, status: status, reason: reason, kind: .tokenDead, prune: prune)
        case .permanent:
            finish(job, status: status, reason: reason, kind: .rejected, error: message)
        case .credentialFailure:
            finish(job, status: status, reason: reason, kind: .unsent, stop: stop(.credentials, refusal()))
        case .retryable:
            retryOrDefer(
                job, status: status, reason: reason, delay: core.answerDelay(job, retryAfterMs: retryAfterMs), counts: true,
                retryAfterMs: retryAfterMs)
        }
    }

    /// Builds the result, counts it and hands it to the submitter.
    func finish(
        _ job: TransferJob, status: Int, reason: String?, kind: DeliveryResult.Kind, prune: PruneDecision = .none,
        error: String? = nil, stop: EndpointStop? = nil
    ) {
        core.deliver(job, job.result(
            status: status, reason: reason, kind: kind, prune: prune, error: error, stop: stop, service: service,
            finishedAtMs: clock.nowMs()))
    }

    // MARK: - The run and what the engine reads

    var summary: SendSummary { core.summary }

    /// The pruning breaker's state under ``breakerKey``, to persist for the next run.
    var breakerStates: [String: PruningBreaker.State] { [breakerKey: shared.withLock { $0.breaker.state }] }
    /// ``breakerKey`` while the breaker keeps suspect tokens.
    var trippedEndpoints: [String] { shared.withLock { $0.breaker.tripped } ? [breakerKey] : [] }

    var endpointConditions: [EndpointCondition] {
        shared.withLock { s in
            guard s.transports != nil else { return [] }
            return [EndpointCondition(
                endpoint: target.description, reachable: s.unreachableSinceMs == nil && s.stop == nil, stopped: s.stop != nil,
                breakerTripped: s.breaker.tripped)]
        }
    }

    /// A stop by an outage gets a fresh chance; a credential stop stays (the credentials must change).
    func beginRun() {
        waiting.beginRun()
        shared.withLock { s in
            if s.stop?.kind == .outage {
                s.stop = nil
                s.unreachableSinceMs = nil
            }
        }
    }

    func abandonWaiting(_ reason: String) {
        for job in waiting.abandonAll() {
            finish(job, status: 0, reason: nil, kind: .unsent, stop: EndpointStop(.stopping, endpoint: target.description, message: reason))
        }
    }

    /// Discards the prunes still held (the service never became confidently healthy this run): those tokens are kept.
    @discardableResult func endRun() -> Int {
        shared.withLock { s in
            defer { s.held.removeAll() }
            return s.held.count
        }
    }

    func shutdown() async {
        abandonWaiting("the sender is shutting down")
        let transports = shared.withLock { $0.transports ?? [] }
        for transport in transports { await transport.stop() }
    }
}
