import Crypto
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOSSL
import PushCore

extension SimulatorConnectionHandler {
    /// Decides the answer for one complete request and sends it.
    func process(context: ChannelHandlerContext, id: HTTP2StreamID, head: RequestValidator.Head, body: [UInt8]) {
        if WebPushService.handles(path: head.path) {
            processWebPush(context: context, id: id, head: head, body: body)
            return
        }
        if UnifiedPushDistributor.handles(path: head.path) {
            processUnifiedPush(context: context, id: id, head: head, body: body)
            return
        }
        if OAuthTokenService.handles(path: head.path) {
            processTokenRequest(context: context, id: id, head: head, body: body, bodyBytes: body.count)
            return
        }
        if FCMMessageService.handles(path: head.path) {
            processFCMSend(context: context, id: id, head: head, body: body, bodyBytes: body.count)
            return
        }
        if HMSTokenService.handles(path: head.path) {
            processHMSTokenRequest(context: context, id: id, head: head, body: body, bodyBytes: body.count)
            return
        }
        if HMSMessageService.handles(path: head.path) {
            processHMSSend(context: context, id: id, head: head, body: body, bodyBytes: body.count)
            return
        }
        if HarmonyOSMessageService.handles(path: head.path) {
            processHarmonyOSSend(context: context, id: id, head: head, body: body, bodyBytes: body.count)
            return
        }
        if ChannelRequestValidator.handles(path: head.path) {
            processChannel(context: context, id: id, head: head, body: body)
            return
        }
        let faults = core.faults
        let verdict: RequestValidator.Verdict
        // An overloaded APNs answers before looking at the request.
        if rng.chance(faults.tooManyRequestsFraction) {
            verdict = .reject(.tooManyRequests, timestampMs: nil)
        } else if rng.chance(faults.serviceUnavailableFraction) {
            verdict = .reject(.serviceUnavailable, timestampMs: nil)
        } else if rng.chance(faults.internalServerErrorFraction) {
            verdict = .reject(.internalServerError, timestampMs: nil)
        } else {
            let now = core.now()
            let client = self.client(context: context, head: head, nowMs: now)
            verdict = core.validator.validate(
                head: head, body: body, client: client, device: core.device, activityEnded: core.activityEnded,
                nowMs: now, newID: { self.rng.uuid() })
        }
        finish(context: context, id: id, head: head, verdict: verdict, faults: faults)
    }

    /// Records the answer, applies the stream-limit and delay faults, and writes the response.
    func finish(
        context: ChannelHandlerContext, id: HTTP2StreamID, head: RequestValidator.Head,
        verdict: RequestValidator.Verdict, faults: SimulatorFaults? = nil
    ) {
        let faults = faults ?? core.faults
        let status: Int
        let reason: APNsReason?
        let timestamp: Int64?
        let notificationId: String
        var uniqueId: String? = nil
        switch verdict {
        case .accept(let request, let generated, let endsActivity):
            if endsActivity { core.endActivity(request.token, atMs: core.now()) }
            status = 200
            reason = nil
            timestamp = nil
            notificationId = head.notificationId ?? request.notificationId
            let unique = rng.uuid()
            uniqueId = unique
            core.recorder.answered(
                status: 200, reason: nil,
                accepted: ReceivedNotification(
                    request: request, uniqueId: unique, apnsIdGenerated: generated, receivedAtMs: core.now(),
                    clientCertificateSHA256: clientCertificateSHA256))
        case .reject(let r, let ts), .answer(_, let r, let ts):
            if case .answer(let scripted, _, _) = verdict { status = scripted } else { status = r.status }
            reason = r
            timestamp = ts
            // Echo the request's apns-id unless that is what was wrong with it.
            notificationId = head.notificationId.flatMap { NotificationID.isValid($0) ? $0 : nil } ?? rng.uuid()
            core.recorder.answered(status: status, reason: r, accepted: nil)
        }

        if status != 200, faults.dropStreamLimitAfterRejection, !limited {
            limited = true
            writeSettings(context: context, maxConcurrentStreams: 1)
        } else if status == 200, limited {
            limited = false
            writeSettings(context: context, maxConcurrentStreams: core.configuration.maxConcurrentStreams)
        }

        if delayDue(faults) {
            awaiting += 1
            let delay = TimeAmount.nanoseconds(Self.nanoseconds(faults.responseDelay))
            _ = context.eventLoop.assumeIsolated().scheduleTask(in: delay) {
                self.awaiting -= 1
                guard !self.closed else { return }
                self.writeResponse(
                    context: context, id: id, status: status, reason: reason, timestampMs: timestamp,
                    notificationId: notificationId, uniqueId: uniqueId)
                self.flushAnswers(context)
                self.closeIfDrained(context: context)
            }
            return
        }
        writeResponse(
            context: context, id: id, status: status, reason: reason, timestampMs: timestamp, notificationId: notificationId,
            uniqueId: uniqueId)
    }

    /// True when this answer is to wait ``SimulatorFaults/responseDelay`` (``SimulatorFaults/delays(request:chance:)``).
    func delayDue(_ faults: SimulatorFaults) -> Bool {
        faults.delays(request: streamsOpened, chance: { rng.chance($0) })
    }

    /// Who the client is, per the configured authentication mode.
    func client(context: ChannelHandlerContext, head: RequestValidator.Head, nowMs: Int64) -> RequestValidator.Client {
        switch core.configuration.clientAuth {
        case .none:
            return .anonymous
        case .certificate:
            return certificateClient(context: context, presented: nil)
        case .either:
            // As APNs: a connection with a client certificate is a certificate connection; without one, the
            // provider token decides (none at all is MissingProviderToken).
            if let known = certificateClient { return known }
            if let presented = peerCertificate(context: context) { return certificateClient(context: context, presented: presented) }
            return tokenClient(head: head, nowMs: nowMs)
        case .token:
            return tokenClient(head: head, nowMs: nowMs)
        }
    }

    /// The TLS peer's certificate, if it presented one.
    private func peerCertificate(context: ChannelHandlerContext) -> NIOSSLCertificate? {
        guard let tls = try? context.pipeline.syncOperations.handler(type: NIOSSLServerHandler.self) else { return nil }
        return tls.peerCertificate
    }

    /// The connection's certificate client (its identity parsed once per connection).
    private func certificateClient(context: ChannelHandlerContext, presented: NIOSSLCertificate?) -> RequestValidator.Client {
        if let known = certificateClient { return known }
        var identity = ClientIdentity(topics: [], development: false, production: false)
        if let certificate = presented ?? peerCertificate(context: context), let der = try? certificate.toDERBytes() {
            clientCertificateSHA256 = SHA256.hash(data: der).map { byte in
                String(byte, radix: 16).count == 1 ? "0" + String(byte, radix: 16) : String(byte, radix: 16)
            }.joined()
            if let parsed = try? ClientIdentity(der: der) { identity = parsed }
        }
        let client = RequestValidator.Client.certificate(identity)
        certificateClient = client
        return client
    }

    /// The request's provider token, verified (the last good one is cached per connection).
    private func tokenClient(head: RequestValidator.Head, nowMs: Int64) -> RequestValidator.Client {
        if let cached = verifiedToken, let header = head.authorization, header.utf8.count == cached.token.utf8.count + 7,
            header.hasSuffix(cached.token)
        {
            if let reason = core.verifier.checkAge(cached, nowMs: nowMs) { return .token(.failure(.init(reason))) }
            return .token(.success(cached))
        }
        let result = core.verifier.verify(authorization: head.authorization, nowMs: nowMs)
        if case .success(let verified) = result { verifiedToken = verified }
        return .token(result)
    }

    /// Advertises a new stream limit; it is enforced once the client acknowledged it (``enforcedLimit``).
    func writeSettings(context: ChannelHandlerContext, maxConcurrentStreams: Int) {
        unacknowledgedLimits.append(maxConcurrentStreams)
        let settings = HTTP2Frame(
            streamID: .rootStream,
            payload: .settings(.settings([HTTP2Setting(parameter: .maxConcurrentStreams, value: maxConcurrentStreams)])))
        context.write(wrapOutboundOut(settings), promise: nil)
        needsFlush = true
    }

    func writeResponse(
        context: ChannelHandlerContext, id: HTTP2StreamID, status: Int, reason: APNsReason?, timestampMs: Int64?,
        notificationId: String, uniqueId: String?
    ) {
        var headers = HPACKHeaders()
        headers.reserveCapacity(4)
        headers.add(name: ":status", value: Self.statusText(status))
        // Unique per response: keep them out of the HPACK dynamic table, which they would only churn.
        headers.add(name: "apns-id", value: notificationId, indexing: .nonIndexable)
        // As any origin server with a clock (RFC 9110 §6.6.1); a provider can compare its own clock with it.
        headers.add(name: "date", value: HTTPDate.format(seconds: core.configuration.clock() / 1000 + core.configuration.dateSkewSeconds))
        needsFlush = true
        defer { flushEarlyIfDue(context: context) }
        guard let reason else {
            if let uniqueId { headers.add(name: "apns-unique-id", value: uniqueId, indexing: .nonIndexable) }
            context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .headers(.init(headers: headers, endStream: true)))), promise: nil)
            answersNotFlushed += 1
            return
        }
        if status == 429 || status == 503, let retryAfter = core.faults.retryAfter {
            headers.add(name: "retry-after", value: retryAfter)
        }
        var json = #"{"reason":"# + JSONValue.string(reason.rawValue).encodedString
        if let timestampMs { json += #","timestamp":\#(timestampMs)"# }
        json += "}"
        var buffer = context.channel.allocator.buffer(capacity: json.utf8.count)
        buffer.writeString(json)
        headers.add(name: "content-type", value: "application/json")
        headers.add(name: "content-length", value: String(buffer.readableBytes))
        context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .headers(.init(headers: headers)))), promise: nil)
        context.write(
            wrapOutboundOut(HTTP2Frame(streamID: id, payload: .data(.init(data: .byteBuffer(buffer), endStream: true)))),
            promise: nil)
        answersNotFlushed += 1
    }

    /// Sends the answers written so far once ``flushEvery`` have queued up in this read batch.
    ///
    /// Flushing only at the end of a read batch makes client and simulator take turns: the client waits
    /// while a whole batch is processed, then the simulator idles while the client reacts. Sending answers
    /// in slices lets the client start its next requests while the rest of the batch is still being served.
    private func flushEarlyIfDue(context: ChannelHandlerContext) {
        unflushedAnswers += 1
        if unflushedAnswers >= Self.flushEvery {
            unflushedAnswers = 0
            needsFlush = false
            flushAnswers(context)
        }
    }

    static func statusText(_ status: Int) -> String {
        switch status {
        case 200: "200"
        case 400: "400"
        case 403: "403"
        case 404: "404"
        case 405: "405"
        case 410: "410"
        case 413: "413"
        case 429: "429"
        case 500: "500"
        case 503: "503"
        default: String(status)
        }
    }

    static func nanoseconds(_ d: Duration) -> Int64 {
        let (seconds, attoseconds) = d.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
