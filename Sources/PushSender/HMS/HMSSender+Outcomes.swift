import Foundation
import Logging
import PushCore

extension HMSSender {
    /// Sends `job` (a first attempt or a retry) on the next connection with the current access token, or finishes it
    /// unsent when Push Kit has stopped for this app. Without a fresh token it waits for the one grant in flight.
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
                let stop = stopHMS(.credentials, "HMS access token for client \(credentials.clientId): \(error.message)")
                finish(job, status: 0, reason: nil, kind: .unsent, error: error.message, stop: stop)
            } catch {
                // No answer from the token endpoint: an outage like an unreachable Push Kit host.
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
            if let headers = s.headers, headers.token == token { return .send(transport, headers.list) }
            let list = HeaderList()
            for line in ["Authorization: Bearer \(token)", "Content-Type: application/json; charset=UTF-8", "Expect:"] { list.append(line) }
            s.headers = (token, list)
            return .send(transport, list)
        }
        switch step {
        case .send(let transport, let headers):
            job.send(on: transport, headers: headers, authorization: token)
        case .unsent(let stop):
            finish(job, status: 0, reason: nil, kind: .unsent, stop: stop)
        }
    }

    /// The app's connections to Push Kit (the lock is held; threads start here).
    private func makeTransports(_ s: inout Shared) -> [Transport] {
        var made: [Transport] = []
        for _ in 0..<max(1, configuration.connections) {
            do {
                let transport = try Transport(target: target, identity: nil, configuration: configuration, metrics: metrics, threadName: "sender-hms", runs: core.waiting) {
                    [unowned self] job, response in self.handle(job, response)
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

    /// Applies ``HMSAnswerRule`` to one attempt's answer, on the transport thread that carried it.
    func handle(_ job: TransferJob, _ response: TransferResponse) {
        if let error = response.error {
            handleTransportError(job, error, response)
            return
        }
        if job.attemptStartedNs > 0 {
            metrics.answered(afterNanoseconds: DispatchTime.now().uptimeNanoseconds &- job.attemptStartedNs)
        }
        shared.withLock { $0.unreachableSinceMs = nil }
        job.attempts += 1
        let answer = HMSAnswer(
            status: response.status, body: response.body, retryAfterMs: response.retryAfter?.delayMs(nowMs: clock.nowMs()))
        // An expired or refused access token (80200003 "Oauth Token expired", 80200001, a bare 401): renew and resend
        // this notification with the new one — once, or again whenever the refused token was half spent (an expiry
        // race: Huawei's clock, or a token it expired early). A job that waited out a retry can meet an expiring
        // token a second time; that must not stop Push Kit for the app.
        let refusedToken = answer.code == HMSAnswerRule.Code.oauthExpired || answer.code == HMSAnswerRule.Code.oauthFailed
            || (answer.status == 401 && answer.code == nil)
        if refusedToken, let token = job.accessToken, !job.refreshedProviderToken || tokens.isHalfSpent(token) {
            job.refreshedProviderToken = true
            tokens.rejected(token.value)
            dispatch(job)
            return
        }
        let reason = Self.reason(answer)
        let kind = HMSAnswerRule.verdict(for: answer, token: job.item.registrationToken).kind
        let prune = breakerDecision(job, answer, tokenDead: kind == .tokenDead)
        let message = answer.message.map { String($0.prefix(200)) }
        switch kind {
        case .accepted:
            finish(job, status: response.status, reason: nil, kind: .accepted)
        case .tokenDead:
            finish(job, status: response.status, reason: reason, kind: .tokenDead, prune: prune)
        case .permanent:
            finish(job, status: response.status, reason: reason, kind: .rejected, error: message)
        case .credentialFailure:
            let stop = stopHMS(
                .credentials, "Push Kit refused client \(credentials.clientId)'s sends (HTTP \(answer.status) \(reason)): \(message ?? "no message")")
            finish(job, status: response.status, reason: reason, kind: .unsent, stop: stop)
        case .retryable:
            retryOrDefer(
                job, status: response.status, reason: reason,
                delay: core.answerDelay(job, retryAfterMs: answer.retryAfterMs), counts: true, retryAfterMs: answer.retryAfterMs)
        }
    }

    /// Counts one answer in the pruning breaker and decides a dead token's prune (``PruningBreaker/answer(tokenDead:suspect:)``):
    /// every invalid-token answer is suspect — what every token answers when the credentials are another app's — so
    /// it is held, released or kept by the breaker. Push Kit has no per-device "uninstalled" answer of its own.
    private func breakerDecision(_ job: TransferJob, _ answer: HMSAnswer, tokenDead: Bool) -> PruneDecision {
        let (decision, change, released, discarded) = shared.withLock { s -> (PruneDecision, PruningBreaker.Change?, [TransferJob], Int) in
            let (prune, change) = s.breaker.answer(tokenDead: tokenDead, suspect: tokenDead)
            let (released, discarded) = PruningBreaker.settle(change, held: &s.held)
            if change == .tripped { core.recordBreakerTrip(breakerKey) }
            var decision = PruneDecision.none
            if let prune {
                // Push Kit gives no timestamp: the store removes the token whatever its registration time. The prune
                // log and its counters name Push Kit's code (80300007, or 80100000 for a partial success's token).
                let request = PruneRequest(service: answer.code ?? HMSAnswerRule.Code.invalidTokens, status: answer.status)
                decision = PruneDecision(prune, request)
                if prune == .held { s.held.append(job) }
            }
            return (decision, change, released, discarded)
        }
        if change == .tripped {
            logger.critical(
                "pruning breaker tripped: too many invalid-token answers from Push Kit; those tokens are kept, not deleted. Check that the app's client ID and secret belong to the AppGallery Connect app its devices register with.",
                metadata: ["endpoint": "\(breakerKey)", "heldPrunesDiscarded": "\(discarded)"])
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
            let stop = stopHMS(.credentials, "TLS with \(target) failed: \(error.message)")
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

    /// Push Kit (or its token endpoint) did not answer: retried with the reconnect backoff until the outage limit,
    /// then Push Kit stops for this app until the next run.
    private func unreachable(_ job: TransferJob, _ message: String) {
        job.lastError = message
        let now = clock.nowMs()
        let since = shared.withLock { s -> Int64 in
            let since = s.unreachableSinceMs ?? now
            s.unreachableSinceMs = since
            return since
        }
        if now - since >= Int64(configuration.outageLimitMs) {
            let stop = stopHMS(
                .outage,
                "Push Kit at \(target) unreachable for \((now - since + 500) / 1000) s (outage limit \(configuration.outageLimitMs / 1000) s): \(message)")
            finish(job, status: 0, reason: nil, kind: .unsent, error: message, stop: stop)
            return
        }
        job.dropped += 1
        retryOrDefer(job, status: 0, reason: nil, delay: core.reconnectDelay(job), counts: false, retryAfterMs: nil)
    }

    /// ``SenderCore/retryOrDefer(_:endpoint:asker:delay:counts:retryAfterMs:dispatch:)`` for Push Kit.
    private func retryOrDefer(_ job: TransferJob, status: Int, reason: String?, delay: Int?, counts: Bool, retryAfterMs: Int64?) {
        guard let ending = core.retryOrDefer(
            job, endpoint: target.description, asker: "Push Kit", delay: delay, counts: counts, retryAfterMs: retryAfterMs,
            dispatch: { [unowned self] in self.dispatch($0) })
        else { return }
        finish(job, status: status, reason: reason, kind: ending.kind, error: ending.error, stop: ending.stop)
    }

    /// Stops Push Kit sending for this app (credentials, TLS, outage): everything sent later comes back unsent. Returns
    /// the stop in force (the first one wins).
    @discardableResult
    func stopHMS(_ kind: EndpointStop.Kind, _ message: String) -> EndpointStop {
        let (stop, transports) = shared.withLock { s -> (EndpointStop, [Transport]) in
            if let existing = s.stop { return (existing, []) }
            let stop = EndpointStop(kind, endpoint: target.description, message: message)
            s.stop = stop
            core.recordStop(stop)
            return (stop, s.transports ?? [])
        }
        if !transports.isEmpty {
            logger.error("stopping HMS sending", metadata: ["endpoint": "\(target)", "reason": "\(message)"])
        }
        for transport in transports { transport.cancel(TransportError.endpointStopped(message)) }
        return stop
    }

    func stoppingStop() -> EndpointStop { core.stoppingStop(target.description) }

    /// The reason a result carries: Push Kit's code (80300007, 80100003, …), `TrafficControl` for a bare 503 (flow
    /// control), else the HTTP status.
    static func reason(_ answer: HMSAnswer) -> String {
        answer.code ?? (answer.status == 503 ? HMSAnswerRule.Code.trafficControl : "HTTP \(answer.status)")
    }

    /// Builds the result, counts it and hands it to the submitter.
    func finish(
        _ job: TransferJob, status: Int, reason: String?, kind: DeliveryResult.Kind, prune: PruneDecision = .none,
        error: String? = nil, stop: EndpointStop? = nil
    ) {
        core.deliver(job, job.result(
            status: status, reason: reason, kind: kind, prune: prune, error: error, stop: stop, service: .hms,
            finishedAtMs: clock.nowMs()))
    }
}
