import Foundation
import Logging
import PushCore

extension FCMSender {
    /// Sends `job` (a first attempt or a retry) on the next connection with the current access token, or finishes it
    /// unsent when FCM has stopped for this app. Without a fresh token it waits for the one grant in flight.
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
                let stop = stopFCM(.credentials, "FCM access token for \(account.clientEmail): \(error.message)")
                finish(job, status: 0, reason: nil, kind: .unsent, error: error.message, stop: stop)
            } catch {
                // No answer from the token endpoint: an outage like an unreachable FCM host.
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

    /// The app's connections to FCM (the lock is held; threads start here).
    private func makeTransports(_ s: inout Shared) -> [Transport] {
        var made: [Transport] = []
        for _ in 0..<max(1, configuration.connections) {
            do {
                let transport = try Transport(target: target, identity: nil, configuration: configuration, metrics: metrics, threadName: "sender-fcm", runs: core.waiting) {
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

    /// Applies ``FCMAnswerRule`` to one attempt's answer, on the transport thread that carried it.
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
        let answer = FCMAnswerRule.Answer(
            status: response.status, body: response.body, retryAfterMs: response.retryAfter?.delayMs(nowMs: clock.nowMs()))
        // A refused access token (expired early, revoked): renew and resend this notification with the new one — once,
        // or again whenever the refused token was half spent (an expiry race, not a refusal: ``AccessTokenCache/isHalfSpent(_:)``).
        // A job that waited out a retry can meet an expiring token a second time; that must not stop FCM for the app.
        if answer.status == 401, answer.error.errorCode == nil, let token = job.accessToken,
            !job.refreshedProviderToken || tokens.isHalfSpent(token)
        {
            job.refreshedProviderToken = true
            tokens.rejected(token.value)
            dispatch(job)
            return
        }
        let reason = Self.reason(answer)
        let kind = FCMAnswerRule.verdict(for: answer).kind
        let prune = breakerDecision(job, answer, tokenDead: kind == .tokenDead)
        switch kind {
        case .accepted:
            finish(job, status: response.status, reason: nil, kind: .accepted)
        case .tokenDead:
            finish(job, status: response.status, reason: reason, kind: .tokenDead, prune: prune)
        case .permanent:
            finish(job, status: response.status, reason: reason, kind: .rejected, error: answer.error.message.map { String($0.prefix(200)) })
        case .credentialFailure:
            let stop = stopFCM(
                .credentials, "FCM refused project \(account.projectId)'s sends (HTTP \(answer.status) \(reason)): \(answer.error.message.map { String($0.prefix(200)) } ?? "no message")")
            finish(job, status: response.status, reason: reason, kind: .unsent, stop: stop)
        case .retryable:
            retryOrDefer(
                job, status: response.status, reason: reason,
                delay: core.answerDelay(job, retryAfterMs: answer.retryAfterMs), counts: true, retryAfterMs: answer.retryAfterMs)
        }
    }

    /// Counts one answer in the pruning breaker and decides a dead token's prune (``PruningBreaker/answer(tokenDead:suspect:)``):
    /// `SENDER_ID_MISMATCH` and an invalid token are suspect — what every token answers when the service account is
    /// the wrong project's — so they are held, released or kept by the breaker; `UNREGISTERED` is pruned at once.
    private func breakerDecision(_ job: TransferJob, _ answer: FCMAnswerRule.Answer, tokenDead: Bool) -> PruneDecision {
        let suspect = tokenDead && answer.error.errorCode != FCMAnswerRule.ErrorCode.unregistered
        let (decision, change, released, discarded) = shared.withLock { s -> (PruneDecision, PruningBreaker.Change?, [TransferJob], Int) in
            let (prune, change) = s.breaker.answer(tokenDead: tokenDead, suspect: suspect)
            let (released, discarded) = PruningBreaker.settle(change, held: &s.held)
            if change == .tripped { core.recordBreakerTrip(breakerKey) }
            var decision = PruneDecision.none
            if let prune {
                // FCM gives no timestamp: the store removes the token whatever its registration time. The prune log and
                // its counters name FCM's own error code (UNREGISTERED, SENDER_ID_MISMATCH, INVALID_ARGUMENT).
                let code = answer.error.errorCode
                    ?? (answer.status == 400 ? FCMAnswerRule.ErrorCode.invalidArgument : FCMAnswerRule.ErrorCode.unregistered)
                let request = PruneRequest(service: code, status: answer.status)
                decision = PruneDecision(prune, request)
                if prune == .held { s.held.append(job) }
            }
            return (decision, change, released, discarded)
        }
        if change == .tripped {
            logger.critical(
                "pruning breaker tripped: too many SENDER_ID_MISMATCH or invalid-token answers; those tokens are kept, not deleted. Check that the app's FCM service account belongs to the Firebase project its Android app registers with.",
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
            let stop = stopFCM(.credentials, "TLS with \(target) failed: \(error.message)")
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

    /// FCM (or its token endpoint) did not answer: retried with the reconnect backoff until the outage limit, then
    /// FCM stops for this app until the next run.
    private func unreachable(_ job: TransferJob, _ message: String) {
        job.lastError = message
        let now = clock.nowMs()
        let since = shared.withLock { s -> Int64 in
            let since = s.unreachableSinceMs ?? now
            s.unreachableSinceMs = since
            return since
        }
        if now - since >= Int64(configuration.outageLimitMs) {
            let stop = stopFCM(
                .outage,
                "FCM at \(target) unreachable for \((now - since + 500) / 1000) s (outage limit \(configuration.outageLimitMs / 1000) s): \(message)")
            finish(job, status: 0, reason: nil, kind: .unsent, error: message, stop: stop)
            return
        }
        job.dropped += 1
        retryOrDefer(job, status: 0, reason: nil, delay: core.reconnectDelay(job), counts: false, retryAfterMs: nil)
    }

    /// ``SenderCore/retryOrDefer(_:endpoint:asker:delay:counts:retryAfterMs:dispatch:)`` for FCM.
    private func retryOrDefer(_ job: TransferJob, status: Int, reason: String?, delay: Int?, counts: Bool, retryAfterMs: Int64?) {
        guard let ending = core.retryOrDefer(
            job, endpoint: target.description, asker: "FCM", delay: delay, counts: counts, retryAfterMs: retryAfterMs,
            dispatch: { [unowned self] in self.dispatch($0) })
        else { return }
        finish(job, status: status, reason: reason, kind: ending.kind, error: ending.error, stop: ending.stop)
    }

    /// Stops FCM sending for this app (credentials, TLS, outage): everything sent later comes back unsent. Returns the
    /// stop in force (the first one wins).
    @discardableResult
    func stopFCM(_ kind: EndpointStop.Kind, _ message: String) -> EndpointStop {
        let (stop, transports) = shared.withLock { s -> (EndpointStop, [Transport]) in
            if let existing = s.stop { return (existing, []) }
            let stop = EndpointStop(kind, endpoint: target.description, message: message)
            s.stop = stop
            core.recordStop(stop)
            return (stop, s.transports ?? [])
        }
        if !transports.isEmpty {
            logger.error("stopping FCM sending", metadata: ["endpoint": "\(target)", "reason": "\(message)"])
        }
        for transport in transports { transport.cancel(TransportError.endpointStopped(message)) }
        return stop
    }

    func stoppingStop() -> EndpointStop { core.stoppingStop(target.description) }

    /// The reason a result carries: FCM's own error code (UNREGISTERED, QUOTA_EXCEEDED, …), else the canonical status
    /// (INVALID_ARGUMENT, UNAUTHENTICATED, …), else the HTTP status.
    static func reason(_ answer: FCMAnswerRule.Answer) -> String {
        answer.error.errorCode ?? answer.error.status ?? "HTTP \(answer.status)"
    }

    /// Builds the result, counts it and hands it to the submitter.
    func finish(
        _ job: TransferJob, status: Int, reason: String?, kind: DeliveryResult.Kind, prune: PruneDecision = .none,
        error: String? = nil, stop: EndpointStop? = nil
    ) {
        core.deliver(job, job.result(
            status: status, reason: reason, kind: kind, prune: prune, error: error, stop: stop, service: .fcm,
            finishedAtMs: clock.nowMs()))
    }
}
