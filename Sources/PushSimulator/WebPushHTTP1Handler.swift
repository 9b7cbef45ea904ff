import NIOCore
import NIOHTTP1

/// Serves HTTP/1.1 connections (a client that negotiated ALPN `http/1.1` or sent no HTTP/2 preface): the Web Push
/// service, the UnifiedPush distributor, FCM, Huawei Push Kit and their OAuth token endpoints, as APNs has no HTTP/1.1
/// interface. Web Push senders such as pywebpush (`requests`), Google's and Huawei's Python clients speak HTTP/1.1.
///
/// Everything here runs on the connection's event loop.
final class WebPushHTTP1Handler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let core: SimulatorCore
    private var head: HTTPRequestHead?
    private var body: [UInt8] = []
    private var bodyBytes = 0
    private var requests = 0
    private var rng = FastRandom()
    private var verifiedVAPID: VAPIDVerifier.Verified?

    /// What a valid request can hold and a little more (a Push Kit send to 1000 tokens is the largest); beyond
    /// that only the size matters.
    static let keptBodyBytes = max(
        WebPushService.maximumBodyBytes, OAuthTokenService.maximumBodyBytes, HMSMessageService.maximumBodyBytes,
        HarmonyOSMessageService.maximumBodyBytes)

    init(core: SimulatorCore) {
        self.core = core
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let requestHead):
            head = requestHead
            body = []
            bodyBytes = 0
        case .body(let buffer):
            bodyBytes += buffer.readableBytes
            if body.count <= Self.keptBodyBytes {
                body.append(contentsOf: buffer.readableBytesView)
            }
        case .end:
            guard let requestHead = head else { return }
            head = nil
            requests += 1
            respond(context: context, head: requestHead)
        }
    }

    private func respond(context: ChannelHandlerContext, head requestHead: HTTPRequestHead) {
        let faults = core.faults
        // The GOAWAY fault's HTTP/1.1 counterpart: the answer says `Connection: close` and the connection closes.
        let closing = !requestHead.isKeepAlive || faults.goAwayAfterStreams.map { requests >= $0 } ?? false
        var response: WebPushService.Response
        let unifiedPush = UnifiedPushDistributor.handles(path: requestHead.uri)
        if unifiedPush || WebPushService.handles(path: requestHead.uri) {
            func one(_ name: String) -> (String?, Bool) {
                let values = requestHead.headers[name]
                return (values.first, values.count > 1)
            }
            let (authorization, d1) = one("authorization")
            let (ttl, d2) = one("ttl")
            let (urgency, d3) = one("urgency")
            let (topic, d4) = one("topic")
            let (encoding, d5) = one("content-encoding")
            var request = RequestValidator.Head()
            request.method = requestHead.method.rawValue
            request.path = requestHead.uri
            request.authority = requestHead.headers.first(name: "host")
            request.authorization = authorization
            request.ttl = ttl
            request.urgency = urgency
            request.webPushTopic = topic
            request.contentEncoding = encoding
            request.duplicate = d1 || d2 || d3 || d4 || d5
            let received = bodyBytes > body.count ? body + [UInt8](repeating: 0, count: bodyBytes - body.count) : body
            if unifiedPush {
                response = core.unifiedPush.respond(
                    to: request, body: received, faults: faults, chance: { self.rng.chance($0) }, cache: &verifiedVAPID)
            } else {
                response = core.webPush.respond(
                    to: request, body: received, faults: faults, chance: { self.rng.chance($0) }, cache: &verifiedVAPID)
            }
        } else if OAuthTokenService.handles(path: requestHead.uri) {
            // Google's client libraries (google-auth over `requests`) get their FCM access tokens over HTTP/1.1.
            response = core.oauth.respond(
                method: requestHead.method.rawValue, path: requestHead.uri, authority: requestHead.headers.first(name: "host"),
                contentType: requestHead.headers.first(name: "content-type"), body: body, bodyBytes: bodyBytes)
        } else if FCMMessageService.handles(path: requestHead.uri) {
            response = core.fcm.respond(
                method: requestHead.method.rawValue, path: requestHead.uri, authorization: requestHead.headers.first(name: "authorization"),
                body: body, bodyBytes: bodyBytes, faults: faults, chance: { self.rng.chance($0) })
        } else if HMSTokenService.handles(path: requestHead.uri) {
            response = core.hmsOAuth.respond(
                method: requestHead.method.rawValue, contentType: requestHead.headers.first(name: "content-type"), body: body,
                bodyBytes: bodyBytes)
        } else if HMSMessageService.handles(path: requestHead.uri) {
            response = core.hms.respond(
                method: requestHead.method.rawValue, path: requestHead.uri,
                authorization: requestHead.headers.first(name: "authorization"),
                contentType: requestHead.headers.first(name: "content-type"), body: body, bodyBytes: bodyBytes, faults: faults,
                chance: { self.rng.chance($0) })
        } else if HarmonyOSMessageService.handles(path: requestHead.uri) {
            response = core.harmonyos.respond(
                method: requestHead.method.rawValue, path: requestHead.uri,
                authorization: requestHead.headers.first(name: "authorization"), pushType: requestHead.headers.first(name: "push-type"),
                contentType: requestHead.headers.first(name: "content-type"), body: body, bodyBytes: bodyBytes)
        } else {
            // APNs is HTTP/2 only: say so rather than pretend.
            let json = Array(#"{"reason":"HTTPVersionNotSupported","message":"APNs requests need HTTP/2; HTTP/1.1 serves Web Push, UnifiedPush, FCM, Huawei Push Kit and their OAuth token endpoints only"}"#.utf8)
            core.recorder.answered(status: 505, reasonText: "HTTPVersionNotSupported")
            response = .init(status: 505, headers: [("content-type", "application/json"), ("content-length", String(json.count))], body: json)
        }
        // A slow distributor (the delay fault) holds its pushes' answers; the pipelining handler holds the connection's
        // next request until this answer is written, so answers keep their order.
        if UnifiedPushDistributor.isPush(method: requestHead.method.rawValue, path: requestHead.uri),
            faults.delays(request: requests, chance: { rng.chance($0) })
        {
            let delay = TimeAmount.nanoseconds(SimulatorConnectionHandler.nanoseconds(faults.responseDelay))
            _ = context.eventLoop.assumeIsolated().scheduleTask(in: delay) {
                self.send(context: context, response: response, closing: closing, faults: faults)
            }
            return
        }
        send(context: context, response: response, closing: closing, faults: faults)
    }

    private func send(context: ChannelHandlerContext, response: WebPushService.Response, closing: Bool, faults: SimulatorFaults) {
        guard context.channel.isActive else { return }
        var headers = HTTPHeaders()
        headers.add(name: "date", value: HTTPDate.format(seconds: core.configuration.clock() / 1000 + core.configuration.dateSkewSeconds))
        for (name, value) in response.headers { headers.add(name: name, value: value) }
        if !headers.contains(name: "content-length") { headers.add(name: "content-length", value: String(response.body.count)) }
        if closing { headers.add(name: "connection", value: "close") }
        let responseHead = HTTPResponseHead(
            version: .http1_1, status: HTTPResponseStatus(statusCode: response.status), headers: headers)
        context.write(wrapOutboundOut(.head(responseHead)), promise: nil)
        if !response.body.isEmpty {
            var buffer = context.channel.allocator.buffer(capacity: response.body.count)
            buffer.writeBytes(response.body)
            context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
        }
        let done = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: done)
        if closing {
            if faults.goAwayAfterStreams != nil { core.recorder.count { $0.goAways += 1 } }
            let channel = context.channel
            done.futureResult.whenComplete { _ in channel.close(promise: nil) }
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        context.close(promise: nil)
    }
}
