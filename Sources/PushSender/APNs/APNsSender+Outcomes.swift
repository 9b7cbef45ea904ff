import Foundation
import Logging
import PushCore

extension APNsSender {
    /// Applies Apple's response rules to one attempt's answer. Runs on the transport thread of the connection
    /// that carried it (one per connection: with several connections, answers of one endpoint interleave, and
    /// everything they share is changed under the sender's lock).
    func handle(_ job: TransferJob, _ response: TransferResponse, _ target: SenderTarget) {
        if let error = response.error {
            handleTransportError(job, error, response, target)
            return
        }
        if job.attemptStartedNs > 0 {
            metrics.answered(afterNanoseconds: DispatchTime.now().uptimeNanoseconds &- job.attemptStartedNs)
        }
        guard response.usedHTTP2 else {
            let stop = stopEndpoint(target, .credentials, "\(target) did not negotiate HTTP/2; APNs requires it")
            finish(job, status: response.status, reason: nil, kind: .unsent, stop: stop)
            return
        }
        var reason: APNsReason?
        var timestampMs: Int64?
        if response.status != 200, !response.body.isEmpty, let json = try? JSONValue(parsing: response.body) {
            reason = json["reason"]?.stringValue.map(APNsReason.init(rawValue:))
            timestampMs = json["timestamp"]?.intValue
        }
        // An HTTP-date Retry-After is absolute: turned into a wait against the sender's clock.
        let verdict = APNsAnswerRule.verdict(
            status: response.status, reason: reason, timestampMs: timestampMs,
            retryAfterMs: response.retryAfter?.delayMs(nowMs: clock.nowMs()))
        let outcome = APNsOutcome(verdict, status: response.status, reason: reason, timestampMs: timestampMs)
        job.attempts += 1

        // One lock for everything an answer changes: the endpoint is reachable, the breaker counts it. Every answer
        // passes here: the endpoint's state is changed in place (no copy of it, one lookup).
        func record(_ e: inout EndpointState) -> (PruneDecision, PruningBreaker.Change?, [TransferJob], Int, [TransferJob]) {
            var reconnected: [TransferJob] = []
            if e.outage != nil {
                reconnected = e.parked
                e.parked.removeAll()
                e.outage = nil
            }
            var dead: (reason: APNsReason, timestampMs: Int64?)?
            if case .tokenDead(let r, let ts) = outcome { dead = (r, ts) }
            let (prune, change) = e.breaker.answer(tokenDead: dead != nil, suspect: reason == .badDeviceToken)
            let (released, discarded) = PruningBreaker.settle(change, held: &e.held)
            var decision = PruneDecision.none
            if let dead, let prune {
                // The request carries the answer's status: the store checks it against the same rule.
                decision = PruneDecision(prune, PruneRequest(reason: dead.reason, status: response.status, apnsTimestampMs: dead.timestampMs))
                if prune == .held { e.held.append(job) }
            }
            return (decision, change, released, discarded, reconnected)
        }
        let (decision, change, released, discarded, reconnected) = shared.withLock {
            s -> (PruneDecision, PruningBreaker.Change?, [TransferJob], Int, [TransferJob]) in
            guard let index = s.endpoints.index(forKey: target) else { return (.none, nil, [], 0, []) }
            let recorded = record(&s.endpoints.values[index])
            if recorded.1 == .tripped { core.recordBreakerTrip(target.description) }
            return recorded
        }
        if !reconnected.isEmpty {
            logger.notice("APNs reachable again; sending the notifications that waited", metadata: [
                "endpoint": "\(target)", "waiting": "\(reconnected.count)",
            ])
            for waiting in reconnected { dispatch(waiting) }
        }
        if change == .tripped { reportBreaker(target, discarded: discarded) }
        for held in released { held.onPruneReleased?(held.item.request.token) }

        switch outcome {
        case .accepted:
            finish(job, status: 200, reason: nil, kind: .accepted, uniqueId: response.uniqueId)
        case .tokenDead(let dead, let ts):
            finish(job, status: response.status, reason: dead, kind: .tokenDead, uniqueId: response.uniqueId,
                   prune: decision, timestampMs: ts)
        case .permanent(let r):
            finish(job, status: response.status, reason: r, kind: .rejected, uniqueId: response.uniqueId)
        case .credentialFailure(let r):
            let stop = stopEndpoint(target, .credentials, "APNs at \(target) refused the credentials: \(r.rawValue) (HTTP \(response.status))")
            finish(job, status: response.status, reason: r, kind: .unsent, uniqueId: response.uniqueId, stop: stop)
        case .retryable(let r):
            if r == .expiredProviderToken {
                // About the credentials, not this device: it does not use one of the device's attempts.
                job.attempts -= 1
                if !job.refreshedProviderToken, let header = job.authorization {
                    job.refreshedProviderToken = true
                    credentials.providerTokenExpired(header)
                    dispatch(job)
                    return
                }
                let stop = stopEndpoint(
                    target, .credentials,
                    "APNs at \(target) answered ExpiredProviderToken again right after the provider token was refreshed: check this server's clock and the .p8 key id and team id")
                finish(job, status: response.status, reason: r, kind: .unsent, stop: stop)
                return
            }
            retryOrDefer(job, status: response.status, reason: r, error: nil, retryAfterMs: verdict.retryAfterMs)
        }
    }

    private func handleTransportError(_ job: TransferJob, _ error: TransportError, _ response: TransferResponse, _ target: SenderTarget) {
        switch SenderCore.failure(error, response) {
        case .endpointStopped:
            let stop = shared.withLock { $0.endpoints[target]?.stop }
                ?? EndpointStop(.stopping, endpoint: target.description, message: error.message)
            finish(job, status: 0, reason: nil, kind: .unsent, stop: stop)
        case .refused:
            let cause = error.proxyStatus == nil ? "TLS with \(target) failed" : "cannot reach \(target)"
            let stop = stopEndpoint(target, .credentials, "\(cause): \(error.message)")
            finish(job, status: 0, reason: nil, kind: .unsent, error: error.message, stop: stop)
        case .unreachable:
            endpointUnreachable(job, target, error.message)
        case .dropped:
            job.lastError = error.message
            if isProbe(job, target) {
                // The probe connected but lost its connection: the endpoint is not back yet.
                job.lostOnTheWire(error, response)
                endpointUnreachable(job, target, error.message)
                return
            }
            // A host that lost its link delivers what its kernel still holds when the link comes back: while the run
            // stops nothing is written again (``SenderCore/afterDrop(_:_:_:endpoint:)``).
            if let ending = core.afterDrop(job, error, response, endpoint: target.description) {
                finish(job, status: 0, reason: nil, kind: ending.kind, error: ending.error, stop: ending.stop)
            } else {
                dispatch(job)  // at once, on a new connection if this one died
            }
        }
    }

    /// Schedules the next attempt after a full-jitter backoff — never sooner than the answer's `Retry-After` —
    /// or defers the notification once its attempts are used up, or when the `Retry-After` is longer than
    /// ``SenderConfiguration/maxRetryAfterMs``. While the run is stopping it comes back unsent instead of waiting.
    func retryOrDefer(_ job: TransferJob, status: Int, reason: APNsReason?, error: String?, retryAfterMs: Int64? = nil) {
        guard let ending = core.retryOrDefer(
            job, endpoint: target(for: job.item.environment).description, asker: "APNs",
            delay: core.answerDelay(job, retryAfterMs: retryAfterMs), counts: true, retryAfterMs: retryAfterMs,
            dispatch: { self.dispatch($0) })
        else { return }
        // A deferral names its cause (the attempts used up: the last answer's error); one the stopping run returns, none.
        finish(
            job, status: status, reason: reason, kind: ending.kind, error: ending.kind == .deferred ? ending.error ?? error : ending.error,
            stop: ending.stop)
    }

    /// Builds the result, counts it and hands it to the submitter.
    func finish(
        _ job: TransferJob, status: Int, reason: APNsReason?, kind: DeliveryResult.Kind, uniqueId: String? = nil,
        prune: PruneDecision = .none, timestampMs: Int64? = nil, error: String? = nil, stop: EndpointStop? = nil
    ) {
        let request = job.item.request
        let result = DeliveryResult(
            token: request.token, notificationId: request.notificationId, uniqueId: uniqueId, status: status, reason: reason,
            kind: kind, prune: prune, attempts: job.attempts, possiblyDuplicated: job.possiblyDuplicated,
            apnsTimestampMs: timestampMs, startedAtMs: job.startedAtMs, finishedAtMs: clock.nowMs(),
            error: error ?? (kind == .deferred || kind == .unsent ? job.lastError : nil), stop: stop)
        core.deliver(job, result)
    }
}
