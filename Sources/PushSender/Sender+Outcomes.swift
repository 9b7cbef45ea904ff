import Foundation
import Logging
import PushCore

extension Sender {
    /// Applies Apple's response rules to one attempt's answer. Runs on the endpoint's transport thread.
    func handle(_ job: TransferJob, _ response: TransferResponse, _ state: EndpointState) {
        if let error = response.error {
            handleTransportError(job, error, uploaded: response.uploadedBytes, state)
            return
        }
        guard response.usedHTTP2 else {
            let error = TransportError.notHTTP2("\(state.target) did not negotiate HTTP/2; APNs requires it")
            stopEndpoint(state, error.message)
            finish(job, status: response.status, reason: nil, kind: .notSent, error: error.message)
            return
        }
        var reason: APNsReason?
        var timestampMs: Int64?
        if response.status != 200, !response.body.isEmpty, let json = try? JSONValue(parsing: response.body) {
            reason = json["reason"]?.stringValue.map(APNsReason.init(rawValue:))
            timestampMs = json["timestamp"]?.intValue
        }
        let outcome = APNsOutcome.classify(status: response.status, reason: reason, timestampMs: timestampMs)
        lock.lock()
        let tripped = state.breaker.record(badDeviceToken: reason == .badDeviceToken)
        let breakerOpen = state.breaker.tripped
        lock.unlock()
        if tripped { reportBreaker(state) }

        switch outcome {
        case .accepted:
            finish(job, status: 200, reason: nil, kind: .accepted, uniqueId: response.uniqueId)
        case .tokenDead(let deadReason, let ts):
            var pruned = false
            if deadReason == .badDeviceToken {
                if !breakerOpen {
                    holdPrune(job.item.request.token, state)
                    pruned = true
                }
            } else {
                recorder.prune(job.item.request.token, reason: deadReason, timestampMs: ts)
                pruned = true
            }
            finish(
                job, status: response.status, reason: deadReason, kind: .tokenDead, uniqueId: response.uniqueId,
                pruned: pruned, timestampMs: ts)
        case .permanent(let r):
            finish(job, status: response.status, reason: r, kind: .rejected, uniqueId: response.uniqueId)
        case .credentialFailure(let r):
            stopEndpoint(state, "\(state.target) rejected our credentials: \(r.rawValue) (HTTP \(response.status))")
            finish(job, status: response.status, reason: r, kind: .credentialFailure, uniqueId: response.uniqueId)
        case .retryable(let r):
            if r == .expiredProviderToken, !job.refreshedProviderToken, let header = job.authorization {
                // Refresh once and retry at once; the credential provider enforces Apple's refresh limits.
                job.refreshedProviderToken = true
                credentials.providerTokenExpired(header)
                start(job)
                return
            }
            retryOrFail(job, status: response.status, reason: r, error: nil)
        }
    }

    private func handleTransportError(_ job: TransferJob, _ error: TransportError, uploaded: Int64, _ state: EndpointState) {
        if error.code == TransportError.endpointStopped("").code {
            finish(job, status: 0, reason: nil, kind: .notSent, error: error.message)
        } else if error.isTLSFailure {
            // Fail closed and do not retry: an untrusted server or a refused client certificate won't heal.
            stopEndpoint(state, "TLS with \(state.target) failed: \(error.message)")
            finish(job, status: 0, reason: nil, kind: .notSent, error: error.message)
        } else if error.isRefusedStream || error.message.contains("GOAWAY"), job.refusals < 100 {
            // REFUSED_STREAM, or a stream above a GOAWAY's last-stream-id: the server guarantees it did not
            // process the request, so resend at once on a (new) connection without using an attempt.
            job.refusals += 1
            job.attempts -= 1
            start(job)
        } else {
            // Reset, timeout or GOAWAY: the request may have been processed if its body left us.
            if uploaded > 0 || error.isTimeout { job.possiblyDuplicated = true }
            if error.isConnectFailure, job.attempts >= configuration.maxAttempts {
                stopEndpoint(state, "cannot connect to \(state.target): \(error.message)")
            }
            retryOrFail(job, status: 0, reason: nil, error: error.message)
        }
    }

    /// Schedules the next attempt after a full-jitter backoff, or records the final failure.
    func retryOrFail(_ job: TransferJob, status: Int, reason: APNsReason?, error: String?) {
        guard job.attempts < configuration.maxAttempts else {
            finish(job, status: status, reason: reason, kind: .failed, error: error)
            return
        }
        let delay = backoff.delayMs(failedAttempts: job.attempts, random: random())
        lock.lock()
        summaryStorage.retried += 1
        lock.unlock()
        let sleeper = sleeper
        Task { [self] in
            await sleeper.sleep(milliseconds: delay)
            start(job)
        }
    }

    /// Records the final outcome and hands it to the caller.
    func finish(
        _ job: TransferJob, status: Int, reason: APNsReason?, kind: DeliveryResult.Kind, uniqueId: String? = nil,
        pruned: Bool = false, timestampMs: Int64? = nil, error: String? = nil
    ) {
        let request = job.item.request
        let result = DeliveryResult(
            token: request.token, apnsId: request.apnsId, uniqueId: uniqueId, status: status, reason: reason,
            kind: kind, pruned: pruned, attempts: job.attempts, possiblyDuplicated: job.possiblyDuplicated,
            apnsTimestampMs: timestampMs, startedAtMs: job.startedAtMs, finishedAtMs: clock.nowMs(), error: error)
        lock.lock()
        summaryStorage.finished += 1
        switch kind {
        case .accepted: summaryStorage.accepted += 1
        case .tokenDead: summaryStorage.tokenDead += 1
        case .rejected: summaryStorage.rejected += 1
        case .failed: summaryStorage.failed += 1
        case .credentialFailure, .notSent: summaryStorage.notSent += 1
        }
        if pruned { summaryStorage.pruned += 1 }
        if job.possiblyDuplicated { summaryStorage.possiblyDuplicated += 1 }
        lock.unlock()
        recorder.add(result)
        job.completion(result)
    }

    /// Stops an endpoint: queued notifications fail as not sent instead of hammering APNs.
    func stopEndpoint(_ state: EndpointState, _ message: String) {
        lock.lock()
        let first = state.stopped == nil
        if first {
            state.stopped = message
            summaryStorage.stoppedEndpoints.append(message)
        }
        lock.unlock()
        guard first else { return }
        logger.error("stopping endpoint", metadata: ["endpoint": "\(state.target)", "reason": "\(message)"])
        state.transport?.cancel(TransportError.endpointStopped(message))
    }

    private func holdPrune(_ token: DeviceToken, _ state: EndpointState) {
        lock.lock()
        state.heldPrunes.append(token)
        lock.unlock()
        flushHeldPrunes(state, force: false)
    }

    /// Applies held BadDeviceToken prunes once the endpoint looks healthy (or at shutdown), never after
    /// the breaker tripped.
    func flushHeldPrunes(_ state: EndpointState, force: Bool) {
        lock.lock()
        var tokens: [DeviceToken] = []
        if !state.breaker.tripped, force || state.breaker.isConfidentlyHealthy {
            swap(&tokens, &state.heldPrunes)
        } else if state.breaker.tripped {
            state.heldPrunes.removeAll()
        }
        lock.unlock()
        for token in tokens { recorder.prune(token, reason: .badDeviceToken, timestampMs: nil) }
    }

    private func reportBreaker(_ state: EndpointState) {
        lock.lock()
        let b = state.breaker
        let kept = state.heldPrunes.count
        state.heldPrunes.removeAll()
        summaryStorage.breakerTripped.append("\(state.target)")
        lock.unlock()
        logger.critical(
            "pruning breaker tripped: \(b.badDeviceTokens) BadDeviceToken of \(b.answers) answers (\(b.consecutive) in a row); BadDeviceToken tokens are kept, not deleted. Check the app's endpoint/environment (sandbox vs production).",
            metadata: ["endpoint": "\(state.target)", "kept": "\(kept)"])
    }
}
