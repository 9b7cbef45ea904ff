import Foundation
import Logging
import PushCore

extension WebPushSender {
    /// Sends `job` (a first attempt or a retry) to its push service's origin with fresh headers (`TTL` counts down,
    /// the VAPID token is the origin's cached one), or finishes it unsent when the origin has stopped.
    func dispatch(_ job: TransferJob) {
        guard let endpoint = job.item.webPush?.endpoint, job.prepared != nil else { return }
        let originName = endpoint.origin
        let authorization: String
        do {
            authorization = try signer.authorization(origin: originName)
        } catch {
            let stop = stopOrigin(originName, .credentials, "cannot sign the VAPID token for \(originName): \(error.message)")
            finish(job, status: 0, reason: nil, kind: .unsent, stop: stop)
            return
        }
        let request = job.item.request
        let nowMs = clock.nowMs()
        enum Step {
            case send(Transport, HeaderList)
            case unsent(EndpointStop)
        }
        let step = shared.withLock { s -> Step in
            if s.origins[originName] == nil { s.origins[originName] = makeOrigin(endpoint) }
            let o = s.origins[originName]!
            if let stop = o.stop { return .unsent(stop) }
            guard let transport = o.transport else { return .unsent(core.stoppingStop(originName)) }
            var topic: String?
            if let collapseId = request.collapseId {
                if let last = o.lastTopic, last.collapseId == collapseId {
                    topic = last.topic
                } else {
                    topic = WebPushHeaders.topic(for: collapseId)
                    s.origins[originName]!.lastTopic = (collapseId, topic!)
                }
            }
            let headers = WebPushHeaders(expiration: request.expiration, priority: request.priority, topic: topic, nowMs: nowMs)
            if let last = o.lastHeaders, last.headers == headers, last.authorization == authorization {
                return .send(transport, last.list)
            }
            let list = HeaderList()
            for line in headers.lines(authorization: authorization) { list.append(line) }
            s.origins[originName]!.lastHeaders = (headers, authorization, list)
            return .send(transport, list)
        }
        switch step {
        case .send(let transport, let headers):
            job.send(on: transport, headers: headers, authorization: authorization)
        case .unsent(let stop):
            finish(job, status: 0, reason: nil, kind: .unsent, stop: stop)
        }
    }

    /// A push service's state and its transport thread, made the first time one of its subscriptions is sent to.
    private func makeOrigin(_ endpoint: WebPushEndpoint) -> Origin {
        let originName = endpoint.origin
        let target = SenderTarget(host: endpoint.host, port: endpoint.port, caFile: caFile)
        let service = service
        // Judged on every connection libcurl makes to the push service itself; a connection to a proxy (the
        // route, decided per host by ``ProxyRoute``) is to the operator's proxy, and the check does not apply there.
        let check = AddressCheck { address in
            service.refusal(address: address, for: endpoint).map {
                "\(originName) resolved to \(address), which is \($0); refused (server-side request forgery). \(service.exemption)"
            }
        }
        do {
            // An `http` distributor (UnifiedPush allows one) gets HTTP/1.1: HTTP/2 without TLS would need an
            // `Upgrade: h2c` round trip few distributors answer.
            let transport = try Transport(
                target: target, identity: nil, configuration: configuration, metrics: metrics,
                maxHostConnections: Self.http1ConnectionsPerOrigin, http1Only: http1Only || !endpoint.isSecure, addressCheck: check,
                threadName: service.pushService == .unifiedpush ? "sender-unifiedp" : "sender-webpush", runs: core.waiting
            ) { [unowned self] job, response in
                self.handle(job, response, originName)
            }
            transport.start()
            return Origin(target: target, transport: transport)
        } catch {
            return Origin(
                target: target, transport: nil,
                stop: EndpointStop(.credentials, endpoint: originName, message: "cannot set up curl for \(originName): \(error.message)"))
        }
    }

    /// Applies ``WebPushAnswerRule`` (``UnifiedPushAnswerRule`` for distributors) to one attempt's answer, on the
    /// transport thread that carried it.
    func handle(_ job: TransferJob, _ response: TransferResponse, _ origin: String) {
        if let error = response.error {
            handleTransportError(job, error, response, origin)
            return
        }
        if job.attemptStartedNs > 0 {
            metrics.answered(afterNanoseconds: DispatchTime.now().uptimeNanoseconds &- job.attemptStartedNs)
        }
        shared.withLock { s in
            s.origins[origin]?.unreachableSinceMs = nil
            if response.usedHTTP2 { s.answeredOverHTTP2 += 1 } else { s.answeredOverHTTP1 += 1 }
        }
        job.attempts += 1
        let reason = Self.reason(response.body)
        let retryAfterMs = response.retryAfter?.delayMs(nowMs: clock.nowMs())
        let verdict = switch service {
        case .webPush: WebPushAnswerRule.verdict(status: response.status, retryAfterMs: retryAfterMs)
        case .unifiedPush: UnifiedPushAnswerRule.verdict(status: response.status, retryAfterMs: retryAfterMs)
        }
        switch verdict.kind {
        case .accepted:
            finish(job, status: response.status, reason: nil, kind: .accepted)
        case .tokenDead:
            // Web Push gives no timestamp: the store removes the subscription whatever its registration time. The
            // prune log and its counters say what the push service said: its status (404 or 410).
            let prune = PruneRequest(service: String(response.status), status: response.status)
            finish(job, status: response.status, reason: reason ?? "Gone", kind: .tokenDead, prune: .delete(prune))
        case .permanent:
            finish(job, status: response.status, reason: reason ?? Self.statusText(response.status), kind: .rejected)
        case .credentialFailure:
            let message = WebPushAnswerRule.credentialFailureExplanation(status: response.status, origin: origin, reason: reason)
            let stop = stopOrigin(origin, .credentials, message)
            finish(job, status: response.status, reason: reason, kind: .unsent, stop: stop)
        case .retryable:
            retryOrDefer(
                job, origin, status: response.status, reason: reason ?? Self.statusText(response.status),
                delay: core.answerDelay(job, retryAfterMs: verdict.retryAfterMs), counts: true, retryAfterMs: verdict.retryAfterMs)
        }
    }

    private func handleTransportError(_ job: TransferJob, _ error: TransportError, _ response: TransferResponse, _ origin: String) {
        if error.code == TransportError.addressRefused("").code {
            // The subscription was accepted at registration; its host now resolves somewhere we never send.
            finish(job, status: 0, reason: "AddressRefused", kind: .rejected, error: error.message)
            return
        }
        let failure = SenderCore.failure(error, response)
        if failure != .endpointStopped { job.lastError = error.message }
        switch failure {
        case .endpointStopped:
            let stop = shared.withLock { $0.origins[origin]?.stop } ?? core.stoppingStop(origin)
            finish(job, status: 0, reason: nil, kind: .unsent, stop: stop)
        case .refused:
            let stop = stopOrigin(origin, .credentials, "TLS with \(origin) failed: \(error.message)")
            finish(job, status: 0, reason: nil, kind: .unsent, error: error.message, stop: stop)
        case .unreachable:
            let now = clock.nowMs()
            let since = shared.withLock { s -> Int64 in
                let since = s.origins[origin]?.unreachableSinceMs ?? now
                s.origins[origin]?.unreachableSinceMs = since
                return since
            }
            if now - since >= Int64(configuration.outageLimitMs) {
                let stop = stopOrigin(
                    origin, .outage,
                    "the push service at \(origin) unreachable for \((now - since + 500) / 1000) s (outage limit \(configuration.outageLimitMs / 1000) s): \(error.message)")
                finish(job, status: 0, reason: nil, kind: .unsent, error: error.message, stop: stop)
                return
            }
            job.dropped += 1
            retryOrDefer(job, origin, status: 0, reason: nil, delay: core.reconnectDelay(job), counts: false, retryAfterMs: nil)
        case .dropped:
            if let ending = core.afterDrop(job, error, response, endpoint: origin) {
                finish(job, status: 0, reason: nil, kind: ending.kind, error: ending.error, stop: ending.stop)
            } else {
                dispatch(job)
            }
        }
    }

    /// ``SenderCore/retryOrDefer(_:endpoint:asker:delay:counts:retryAfterMs:dispatch:)`` for `origin`.
    private func retryOrDefer(
        _ job: TransferJob, _ origin: String, status: Int, reason: String?, delay: Int?, counts: Bool, retryAfterMs: Int64?
    ) {
        guard let ending = core.retryOrDefer(
            job, endpoint: origin, asker: origin, delay: delay, counts: counts, retryAfterMs: retryAfterMs,
            dispatch: { [unowned self] in self.dispatch($0) })
        else { return }
        finish(job, status: status, reason: reason, kind: ending.kind, error: ending.error, stop: ending.stop)
    }

    /// Stops one origin for good (credentials, TLS, outage): everything sent there later comes back unsent; the
    /// other origins go on. Returns the stop in force (the first one wins).
    @discardableResult
    func stopOrigin(_ origin: String, _ kind: EndpointStop.Kind, _ message: String) -> EndpointStop {
        let (stop, transport) = shared.withLock { s -> (EndpointStop, Transport?) in
            if let existing = s.origins[origin]?.stop { return (existing, nil) }
            let stop = EndpointStop(kind, endpoint: origin, message: message)
            s.origins[origin]?.stop = stop
            core.recordStop(stop)
            return (stop, s.origins[origin]?.transport)
        }
        if let transport {
            logger.error("stopping push service origin", metadata: ["origin": "\(origin)", "reason": "\(message)"])
            transport.cancel(TransportError.endpointStopped(message))
        }
        return stop
    }

    /// The push service's `reason` from a JSON error body (Apple's, the simulator's), if any.
    static func reason(_ body: [UInt8]) -> String? {
        guard !body.isEmpty, body.first == UInt8(ascii: "{"), let json = try? JSONValue(parsing: body) else { return nil }
        return json["reason"]?.stringValue.map { String($0.prefix(100)) }
    }

    static func statusText(_ status: Int) -> String {
        switch status {
        case 400: "BadRequest"
        case 413: "PayloadTooLarge"
        case 429: "TooManyRequests"
        case 500: "InternalServerError"
        case 503: "ServiceUnavailable"
        default: "HTTP \(status)"
        }
    }

    /// Builds the result, counts it and hands it to the submitter.
    func finish(
        _ job: TransferJob, status: Int, reason: String?, kind: DeliveryResult.Kind, prune: PruneDecision = .none,
        error: String? = nil, stop: EndpointStop? = nil
    ) {
        core.deliver(job, job.result(
            status: status, reason: reason, kind: kind, prune: prune, error: error, stop: stop, service: service.pushService,
            finishedAtMs: clock.nowMs()))
    }
}
