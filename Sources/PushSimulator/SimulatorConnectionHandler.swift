import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOSSL
import PushCore

/// Serves one client connection: reads HTTP/2 frames straight off the connection (no per-stream child
/// channels, which keeps the per-request cost low), validates each request, answers it, and injects faults.
///
/// Everything here runs on the connection's event loop.
final class SimulatorConnectionHandler: ChannelDuplexHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    /// A request whose headers arrived and whose body is still coming.
    struct PendingStream {
        var head: RequestValidator.Head
        var body: [UInt8] = []
        var bodyBytes = 0
        /// Body bytes beyond this are not kept: the request is answered early (``bodyLimit(path:)``).
        var bodyLimit = SimulatorConnectionHandler.earlyRejectBytes
        /// Body bytes read since the stream's window was last topped up (only for bodies that may exceed the
        /// initial 65,535-byte stream window: nobody else sends this handler's stream WINDOW_UPDATEs).
        var unacknowledgedBytes = 0
    }

    let core: SimulatorCore
    // Every property below is only touched on the connection's event loop, so the runtime exclusivity
    // checks (several percent of the per-request CPU) are switched off for them.
    @exclusivity(unchecked) var streams: [HTTP2StreamID: PendingStream] = [:]
    /// Complete requests not yet answered (delayed, or deferred while the stream limit is dropped).
    @exclusivity(unchecked) var awaiting = 0
    /// Complete requests held until the end of the read batch while the stream limit is 1.
    @exclusivity(unchecked) var deferred: [(HTTP2StreamID, RequestValidator.Head, [UInt8])] = []
    /// The stream limit has been dropped to 1 after a rejection.
    @exclusivity(unchecked) var limited = false
    @exclusivity(unchecked) var streamsOpened = 0
    /// The stream limit this connection enforces (``SimulatorFaults/excessStream`` answers a stream over it): the
    /// configured one from the first stream, a changed one once the client acknowledged its SETTINGS (RFC 9113 §6.5.3).
    @exclusivity(unchecked) var enforcedLimit: Int
    /// The stream limit of each SETTINGS frame sent and not yet acknowledged, oldest first (the preamble's first:
    /// NIOHTTP2Handler sends it): an ACK acknowledges the oldest (§6.5.3).
    @exclusivity(unchecked) var unacknowledgedLimits: [Int]
    /// The last stream accepted (a GOAWAY for a stream over the limit names it).
    @exclusivity(unchecked) var lastAcceptedStream = HTTP2StreamID.rootStream
    @exclusivity(unchecked) var goingAway = false
    /// The last-stream-id of the GOAWAY this connection sent: later streams are never processed.
    @exclusivity(unchecked) var goAwayLastStream: HTTP2StreamID?
    /// Every stream up to the GOAWAY's last-stream-id is answered; waiting for the client to close.
    @exclusivity(unchecked) var goAwayDrained = false
    @exclusivity(unchecked) var closed = false
    @exclusivity(unchecked) var needsFlush = false
    /// Answers written since the last flush (see ``flushEarlyIfDue(context:)``).
    @exclusivity(unchecked) var unflushedAnswers = 0
    /// Streams answered (any service) since the last flush: still open as far as the client can know, so they count
    /// against the stream limit (``answerExcess(context:id:_:)``) until the flush.
    @exclusivity(unchecked) var answersNotFlushed = 0
    /// The connection's inbound flow-control window as NIO last reported it.
    @exclusivity(unchecked) var connectionWindow = 65535
    @exclusivity(unchecked) var rng = FastRandom()
    /// The client as established by TLS (certificate mode) — read once, on the first request.
    @exclusivity(unchecked) var certificateClient: RequestValidator.Client?
    /// The SHA-256 (hex) of the client certificate the connection presented, found with ``certificateClient``.
    @exclusivity(unchecked) var clientCertificateSHA256: String?
    /// The last provider token that verified, so each request only pays for a string compare.
    @exclusivity(unchecked) var verifiedToken: ProviderTokenVerifier.Verified?
    /// The last VAPID header that verified (Web Push), likewise.
    @exclusivity(unchecked) var verifiedVAPID: VAPIDVerifier.Verified?
    /// Read pacing (see ``read(context:)``): requests the client completed since the last read was asked for.
    @exclusivity(unchecked) var requestsSinceRead = 0
    /// When the last socket read was let through.
    @exclusivity(unchecked) var lastReadAt = NIODeadline.uptimeNanoseconds(0)
    /// Reads are being held back to ``readPacing`` apart.
    @exclusivity(unchecked) var pacing = false
    /// The read being held back, if any.
    @exclusivity(unchecked) var heldRead: Scheduled<Void>?
    /// The last read let through was a held one (its yield decides whether pacing goes on).
    @exclusivity(unchecked) var lastReadWasHeld = false
    /// Held reads in a row that delivered fewer than ``pacingMinimumYield`` requests.
    @exclusivity(unchecked) var poorHolds = 0
    /// Held reads in a row that delivered ``pacingMaximumYield`` requests or more.
    @exclusivity(unchecked) var bigHolds = 0
    /// Reads to let through unpaced before pacing may start again.
    @exclusivity(unchecked) var unpacedReads = 0
    /// The minimum time between two socket reads while pacing (zero: never pace).
    let readPacing: TimeAmount

    /// The inbound connection window we keep topping up to (bytes).
    static let connectionWindowTarget = 1 << 20
    /// Answers per flush within one read batch: small enough that the client gets work back early, large
    /// enough that TLS records and write syscalls stay few (measured with h2load `-m 100`).
    /// (h2load `-c 1 -m 100` on 2 cores: 25–29k req/s flushing per read batch, ~44k at 32 or 50, 35–41k at 8–24.)
    static let flushEvery = 32
    /// A body this large cannot be valid for any push type: answer 413 without waiting for the rest.
    static let earlyRejectBytes = 32 * 1024
    /// A large body's stream window is topped up once this much of it has been read.
    static let streamWindowTopUp = 32 * 1024

    init(core: SimulatorCore) {
        self.core = core
        self.readPacing = .nanoseconds(Self.nanoseconds(core.configuration.readPacing))
        enforcedLimit = core.configuration.maxConcurrentStreams
        unacknowledgedLimits = [core.configuration.maxConcurrentStreams]
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        let id = frame.streamID
        switch frame.payload {
        case .headers(let headers):
            if streams[id] != nil {
                if headers.endStream { complete(context: context, id: id) }
            } else {
                open(context: context, id: id, headers: headers.headers, endStream: headers.endStream)
            }
        case .data(let payload):
            guard case .byteBuffer(let buffer) = payload.data, let index = streams.index(forKey: id) else { return }
            // Mutate in place: copying the pending stream out and back would copy its body each frame.
            streams.values[index].bodyBytes += buffer.readableBytes
            let total = streams.values[index].bodyBytes
            let limit = streams.values[index].bodyLimit
            if total <= limit {
                streams.values[index].body.append(contentsOf: buffer.readableBytesView)
            }
            if limit > Self.earlyRejectBytes, !payload.endStream, total <= limit {
                // A large body (Push Kit's): give the stream its window back as it is read.
                streams.values[index].unacknowledgedBytes += buffer.readableBytes + (payload.paddingBytes ?? 0)
                let consumed = streams.values[index].unacknowledgedBytes
                if consumed >= Self.streamWindowTopUp {
                    streams.values[index].unacknowledgedBytes = 0
                    context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .windowUpdate(windowSizeIncrement: consumed))), promise: nil)
                    needsFlush = true
                }
            }
            if payload.endStream {
                complete(context: context, id: id)
            } else if total > limit {
                let head = streams.values[index].head
                streams.remove(at: index)
                if WebPushService.handles(path: head.path) {
                    processWebPush(context: context, id: id, head: head, body: [UInt8](repeating: 0, count: total))
                } else if UnifiedPushDistributor.handles(path: head.path) {
                    processUnifiedPush(context: context, id: id, head: head, body: [UInt8](repeating: 0, count: total))
                } else if OAuthTokenService.handles(path: head.path) {
                    processTokenRequest(context: context, id: id, head: head, body: [], bodyBytes: total)
                } else if FCMMessageService.handles(path: head.path) {
                    processFCMSend(context: context, id: id, head: head, body: [], bodyBytes: total)
                } else if HMSTokenService.handles(path: head.path) {
                    processHMSTokenRequest(context: context, id: id, head: head, body: [], bodyBytes: total)
                } else if HMSMessageService.handles(path: head.path) {
                    processHMSSend(context: context, id: id, head: head, body: [], bodyBytes: total)
                } else if HarmonyOSMessageService.handles(path: head.path) {
                    processHarmonyOSSend(context: context, id: id, head: head, body: [], bodyBytes: total)
                } else {
                    finish(context: context, id: id, head: head, verdict: .reject(.payloadTooLarge, timestampMs: nil))
                }
                // Flush first: a RST_STREAM would discard the answer's DATA still queued in NIOHTTP2Handler.
                flushAnswers(context)
                context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .rstStream(.noError))), promise: nil)
            }
        case .rstStream:
            streams[id] = nil
        case .settings(.ack):
            // The client applies our SETTINGS before it acknowledges them: from now on it honours their limit (NIO
            // itself then treats a stream over it as a connection error, whatever ``SimulatorFaults/excessStream``).
            if !unacknowledgedLimits.isEmpty { enforcedLimit = unacknowledgedLimits.removeFirst() }
        default:
            break
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if !deferred.isEmpty {
            let batch = deferred
            deferred.removeAll()
            for (id, head, body) in batch {
                awaiting -= 1
                process(context: context, id: id, head: head, body: body)
            }
        }
        if connectionWindow <= Self.connectionWindowTarget / 2 {
            let increment = Self.connectionWindowTarget - connectionWindow
            connectionWindow = Self.connectionWindowTarget
            let frame = HTTP2Frame(streamID: .rootStream, payload: .windowUpdate(windowSizeIncrement: increment))
            context.write(wrapOutboundOut(frame), promise: nil)
            needsFlush = true
        }
        flushIfNeeded(context: context)
        closeIfDrained(context: context)
        context.fireChannelReadComplete()
    }

    /// Sent through the pipeline by ``PushSimulator/suspend()``: reset this connection.
    struct ResetConnection {}

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // NIOHTTP2Handler sends several events per stream (created, closed, window updates): compare the
        // event's type first, which is cheaper than a dynamic cast per candidate type.
        let kind = type(of: event)
        if kind == ResetConnection.self {
            resetConnection(context: context)
            return
        }
        // Without a stream multiplexer nobody else tops up the connection's receive window. Events can be
        // stale (several arrive per read batch), so only note the latest size and top up once per batch.
        if kind == NIOHTTP2WindowUpdatedEvent.self, let update = event as? NIOHTTP2WindowUpdatedEvent,
            update.streamID == .rootStream, let size = update.inboundWindowSize
        {
            connectionWindow = size
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        closed = true
        streams.removeAll()
        deferred.removeAll()
        heldRead?.cancel()
        heldRead = nil
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        heldRead?.cancel()
        heldRead = nil
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        // A stream-level error (NIOHTTP2Handler answers it with RST_STREAM — e.g. frames of a stream above our
        // GOAWAY's last-stream-id) and NIO declining to raise that last-stream-id concern one stream, not the
        // connection: closing would destroy the answers still in flight. Protocol errors are answered by
        // NIOHTTP2Handler (GOAWAY); TLS and I/O errors close the connection.
        if error is NIOHTTP2Errors.StreamError || error is NIOHTTP2Errors.RaisedGoawayLastStreamID { return }
        // Frames of a stream above our GOAWAY's last-stream-id (a client's DATA or WINDOW_UPDATE sent before it read
        // the GOAWAY) are ignored (RFC 9113 §6.8), not a reason to close: NIO reports them as NoSuchStream.
        if let noSuchStream = error as? NIOHTTP2Errors.NoSuchStream, let last = goAwayLastStream,
            noSuchStream.streamID > last
        {
            return
        }
        // Once every stream up to our GOAWAY's last-stream-id is done, NIO holds the connection fully quiesced and
        // reports each later frame of the client (those of streams above the last-stream-id it sent before it read the
        // GOAWAY, a WINDOW_UPDATE, its own GOAWAY) as IOOnClosedConnection. They are ignored too, and the connection
        // waits for the client to close it (``closeIfDrained(context:)``). Closing on them, with the client's frames
        // unread, made the kernel reset the connection while the client was still reading the answers: libcurl 8 then
        // failed every transfer on it with CURLE_SEND_ERROR, answered ones too, and the sender resent notifications
        // already processed (SenderTests.goAwayAfter500Of2000StreamsLosesNothing).
        if error is NIOHTTP2Errors.IOOnClosedConnection, goingAway { return }
        context.close(promise: nil)
    }

    // MARK: - Streams

    private func open(context: ChannelHandlerContext, id: HTTP2StreamID, headers: HPACKHeaders, endStream: Bool) {
        // After a GOAWAY, streams above its last-stream-id are discarded unprocessed (RFC 9113 §6.8), so the
        // client may safely send them again on a new connection.
        if let last = goAwayLastStream, id > last { return }
        let faults = core.faults
        if let n = faults.resetAfterRequests, streamsOpened >= n {
            resetConnection(context: context)
            return
        }
        if limited, streams.count + awaiting >= 1 {
            refuse(context: context, id: id)
            return
        }
        // Open streams: those still arriving, those complete but not answered yet, and those answered but not yet
        // flushed (the client cannot have seen those answers when it opened this stream). A client that honours the
        // limit always counts at least as many as open.
        if streams.count + awaiting + answersNotFlushed >= enforcedLimit {
            answerExcess(context: context, id: id, faults.excessStream)
            return
        }
        let head = Self.parseHead(headers)
        if head.malformed {
            context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .rstStream(.protocolError))), promise: nil)
            needsFlush = true
            core.recorder.count { $0.malformedStreams += 1 }
            return
        }
        streamsOpened += 1
        lastAcceptedStream = id
        streams[id] = PendingStream(head: head, bodyLimit: Self.bodyLimit(path: head.path))
        if let change = faults.streamLimitChange {
            if streamsOpened == change.afterStreams {
                writeSettings(context: context, maxConcurrentStreams: change.limit)
                core.recorder.count { $0.streamLimitChanges += 1 }
            } else if streamsOpened == change.afterStreams + change.forStreams {
                writeSettings(context: context, maxConcurrentStreams: core.configuration.maxConcurrentStreams)
                core.recorder.count { $0.streamLimitChanges += 1 }
            }
        }
        if let n = faults.goAwayAfterStreams, streamsOpened == n, !goingAway {
            goingAway = true
            goAwayLastStream = id
            var debug = context.channel.allocator.buffer(capacity: 32)
            debug.writeString(#"{"reason":"Shutdown"}"#)
            let goAway = HTTP2Frame(
                streamID: .rootStream, payload: .goAway(lastStreamID: id, errorCode: .noError, opaqueData: debug))
            context.write(wrapOutboundOut(goAway), promise: nil)
            needsFlush = true
            core.recorder.count { $0.goAways += 1 }
        }
        if endStream { complete(context: context, id: id) }
    }

    private func complete(context: ChannelHandlerContext, id: HTTP2StreamID) {
        guard let stream = streams.removeValue(forKey: id) else { return }
        requestsSinceRead += 1
        if limited, awaiting >= 1 {
            // Streams the client opened before it saw the lowered limit: one is served, the rest refused.
            refuse(context: context, id: id)
            return
        }
        let body = stream.bodyBytes > stream.bodyLimit ? [UInt8](repeating: 0, count: stream.bodyBytes) : stream.body
        if limited {
            // Hold the answer until the end of this read batch, so streams arriving alongside it exceed the limit.
            awaiting += 1
            deferred.append((id, stream.head, body))
            return
        }
        // The OAuth token endpoints are other hosts at Google and Huawei: not in the service's line.
        if let rate = core.faults.answersPerSecond, rate > 0, !OAuthTokenService.handles(path: stream.head.path),
            !HMSTokenService.handles(path: stream.head.path)
        {
            answerInLine(context: context, id: id, head: stream.head, body: body, perSecond: rate)
            return
        }
        process(context: context, id: id, head: stream.head, body: body)
    }

    /// ``SimulatorFaults/answersPerSecond``: the request is processed and answered at its slot in the simulator's
    /// line, alone in its own flush (one TLS record, one segment: the client meets each answer as its own event).
    private func answerInLine(context: ChannelHandlerContext, id: HTTP2StreamID, head: RequestValidator.Head, body: [UInt8], perSecond: Double) {
        awaiting += 1
        let slot = core.nextAnswerSlot(perSecond: perSecond)
        _ = context.eventLoop.assumeIsolated().scheduleTask(deadline: slot) {
            self.awaiting -= 1
            guard !self.closed else { return }
            self.process(context: context, id: id, head: head, body: body)
            self.needsFlush = false
            self.unflushedAnswers = 0
            self.flushAnswers(context)
            self.closeIfDrained(context: context)
        }
    }

    /// A stream over the connection's stream limit (``enforcedLimit``), answered as ``SimulatorFaults/excessStream``
    /// says.
    private func answerExcess(context: ChannelHandlerContext, id: HTTP2StreamID, _ answer: SimulatorFaults.ExcessStreamAnswer) {
        core.recorder.count { $0.excessStreams += 1 }
        switch answer {
        case .refuse:
            refuse(context: context, id: id)
        case .protocolError:
            context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .rstStream(.protocolError))), promise: nil)
            needsFlush = true
        case .closeConnection:
            guard !closed else { return }
            // As Python's h2 (TooManyStreamsError → GOAWAY PROTOCOL_ERROR), then the transport closed at once: the
            // streams up to the last-stream-id lose their answers; those above it were never processed (§6.8).
            let last = min(lastAcceptedStream, goAwayLastStream ?? lastAcceptedStream)
            goingAway = true
            goAwayLastStream = last
            var debug = context.channel.allocator.buffer(capacity: 64)
            debug.writeString("stream \(id) exceeds SETTINGS_MAX_CONCURRENT_STREAMS \(enforcedLimit)")
            context.write(
                wrapOutboundOut(HTTP2Frame(streamID: .rootStream, payload: .goAway(lastStreamID: last, errorCode: .protocolError, opaqueData: debug))),
                promise: nil)
            flushAnswers(context)
            closed = true
            streams.removeAll()
            deferred.removeAll()
            core.recorder.count { $0.excessClosures += 1 }
            context.close(promise: nil)
        }
    }

    private func refuse(context: ChannelHandlerContext, id: HTTP2StreamID) {
        context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .rstStream(.refusedStream))), promise: nil)
        needsFlush = true
        core.recorder.count { $0.refusedStreams += 1 }
    }

    static func parseHead(_ headers: HPACKHeaders) -> RequestValidator.Head {
        var head = RequestValidator.Head()
        var duplicate = false
        var malformed = false
        var scheme = false
        var regularSeen = false
        func set(_ slot: inout String?, _ value: String) {
            if slot != nil { duplicate = true } else { slot = value }
        }
        for (name, value, _) in headers {
            // HTTP/2 header names are lowercase; pseudo-headers come first, once each.
            if name.isEmpty || name.utf8.contains(where: { $0 >= 0x41 && $0 <= 0x5a }) { malformed = true }
            if name.utf8.first == UInt8(ascii: ":") {
                if regularSeen { malformed = true }
                switch name {
                case ":method": if head.method != nil { malformed = true } else { head.method = value }
                case ":path": if head.path != nil { malformed = true } else { head.path = value }
                case ":scheme": if scheme { malformed = true } else { scheme = true }
                case ":authority": head.authority = value
                default: malformed = true
                }
                continue
            }
            regularSeen = true
            switch name {
            case "apns-id": set(&head.notificationId, value)
            case "apns-push-type": set(&head.pushType, value)
            case "apns-priority": set(&head.priority, value)
            case "apns-expiration": set(&head.expiration, value)
            case "apns-collapse-id": set(&head.collapseId, value)
            case "apns-topic": set(&head.topic, value)
            case "authorization": set(&head.authorization, value)
            case "apns-channel-id": set(&head.channelId, value)
            case "apns-request-id": set(&head.requestId, value)
            case "ttl": set(&head.ttl, value)
            case "urgency": set(&head.urgency, value)
            case "topic": set(&head.webPushTopic, value)
            case "content-encoding": set(&head.contentEncoding, value)
            case "content-type": set(&head.contentType, value)
            case "push-type": set(&head.huaweiPushType, value)
            case "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade": malformed = true
            case "te": if value != "trailers" { malformed = true }
            default: break
            }
        }
        if head.method == nil || head.path == nil || !scheme || head.path?.isEmpty == true { malformed = true }
        head.duplicate = duplicate
        head.malformed = malformed
        return head
    }

    /// Flushes: the answers written so far may reach the client from now on.
    func flushAnswers(_ context: ChannelHandlerContext) {
        answersNotFlushed = 0
        context.flush()
    }

    func flushIfNeeded(context: ChannelHandlerContext) {
        if needsFlush {
            needsFlush = false
            unflushedAnswers = 0
            flushAnswers(context)
        }
    }

    /// After a GOAWAY, once every stream up to the last-stream-id has its answer, wait for the client to close
    /// (it does once its own streams are done), reading and discarding what it still sends; close ourselves
    /// only after ``goAwayCloseGraceSeconds``. Closing at once, with the client's late frames unread, would
    /// make the kernel send a TCP RST, and the RST destroys the GOAWAY and the answers the client has not
    /// read yet: a graceful APNs shutdown would look like a crash.
    func closeIfDrained(context: ChannelHandlerContext) {
        if goingAway, !goAwayDrained, !closed, streams.isEmpty, awaiting == 0 {
            goAwayDrained = true
            flushAnswers(context)
            let channel = context.channel
            context.eventLoop.scheduleTask(in: .seconds(Self.goAwayCloseGraceSeconds)) { channel.close(promise: nil) }
        }
    }

    /// How long a connection that sent GOAWAY waits for the client to close it.
    static let goAwayCloseGraceSeconds: Int64 = 5

    private func resetConnection(context: ChannelHandlerContext) {
        guard !closed else { return }
        closed = true
        core.recorder.count { $0.resets += 1 }
        // SO_LINGER 0 makes close() send a TCP RST instead of a FIN: the abrupt loss clients must survive.
        // Close from the TLS handler's own context so the close bypasses it (no close_notify exchange).
        let below = try? context.pipeline.syncOperations.context(handlerType: NIOSSLServerHandler.self)
        if let provider = context.channel as? SocketOptionProvider {
            _ = provider.setSoLinger(NIOLinger(l_onoff: 1, l_linger: 0))
        }
        if let below { below.close(promise: nil) } else { context.close(promise: nil) }
    }
}
