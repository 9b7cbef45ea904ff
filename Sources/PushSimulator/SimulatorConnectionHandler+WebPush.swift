import NIOCore
import NIOHPACK
import NIOHTTP2

extension SimulatorConnectionHandler {
    /// Answers a Web Push request (``WebPushService``) on this HTTP/2 connection.
    func processWebPush(context: ChannelHandlerContext, id: HTTP2StreamID, head: RequestValidator.Head, body: [UInt8]) {
        let response = core.webPush.respond(
            to: head, body: body, faults: core.faults, chance: { self.rng.chance($0) }, cache: &verifiedVAPID)
        write(context: context, id: id, response: response)
    }

    /// Answers a UnifiedPush request (``UnifiedPushDistributor``) on this HTTP/2 connection; a push's answer waits
    /// for the delay fault (a slow distributor), as APNs answers do.
    func processUnifiedPush(context: ChannelHandlerContext, id: HTTP2StreamID, head: RequestValidator.Head, body: [UInt8]) {
        let faults = core.faults
        let response = core.unifiedPush.respond(
            to: head, body: body, faults: faults, chance: { self.rng.chance($0) }, cache: &verifiedVAPID)
        guard UnifiedPushDistributor.isPush(method: head.method, path: head.path), delayDue(faults) else {
            write(context: context, id: id, response: response)
            return
        }
        awaiting += 1
        _ = context.eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(Self.nanoseconds(faults.responseDelay))) {
            self.awaiting -= 1
            guard !self.closed else { return }
            self.write(context: context, id: id, response: response)
            self.flushAnswers(context)
            self.closeIfDrained(context: context)
        }
    }

    /// Writes an answer of the Web Push service or the OAuth token endpoint on stream `id`.
    func write(context: ChannelHandlerContext, id: HTTP2StreamID, response: WebPushService.Response) {
        var headers = HPACKHeaders()
        headers.add(name: ":status", value: Self.statusText(response.status))
        headers.add(name: "date", value: HTTPDate.format(seconds: core.configuration.clock() / 1000 + core.configuration.dateSkewSeconds))
        for (name, value) in response.headers where name != "content-length" || !response.body.isEmpty {
            headers.add(name: name, value: value)
        }
        needsFlush = true
        guard !response.body.isEmpty else {
            context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .headers(.init(headers: headers, endStream: true)))), promise: nil)
            answersNotFlushed += 1
            return
        }
        var buffer = context.channel.allocator.buffer(capacity: response.body.count)
        buffer.writeBytes(response.body)
        context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .headers(.init(headers: headers)))), promise: nil)
        context.write(
            wrapOutboundOut(HTTP2Frame(streamID: id, payload: .data(.init(data: .byteBuffer(buffer), endStream: true)))),
            promise: nil)
        answersNotFlushed += 1
    }
}
