import NIOCore
import NIOHTTP2

extension SimulatorConnectionHandler {
    /// Answers a request to Huawei's OAuth token endpoint (``HMSTokenService``) on this HTTP/2 connection.
    func processHMSTokenRequest(
        context: ChannelHandlerContext, id: HTTP2StreamID, head: RequestValidator.Head, body: [UInt8], bodyBytes: Int
    ) {
        let response = core.hmsOAuth.respond(
            method: head.method, contentType: head.contentType, body: body, bodyBytes: bodyBytes)
        write(context: context, id: id, response: response)
    }

    /// Answers a Huawei Push Kit send (``HMSMessageService``) on this HTTP/2 connection.
    func processHMSSend(
        context: ChannelHandlerContext, id: HTTP2StreamID, head: RequestValidator.Head, body: [UInt8], bodyBytes: Int
    ) {
        let response = core.hms.respond(
            method: head.method, path: head.path, authorization: head.authorization, contentType: head.contentType,
            body: body, bodyBytes: bodyBytes, faults: core.faults, chance: { self.rng.chance($0) })
        write(context: context, id: id, response: response)
    }

    /// Answers a Push Kit scenario-API send for HarmonyOS (``HarmonyOSMessageService``) on this HTTP/2 connection.
    func processHarmonyOSSend(
        context: ChannelHandlerContext, id: HTTP2StreamID, head: RequestValidator.Head, body: [UInt8], bodyBytes: Int
    ) {
        let response = core.harmonyos.respond(
            method: head.method, path: head.path, authorization: head.authorization, pushType: head.huaweiPushType,
            contentType: head.contentType, body: body, bodyBytes: bodyBytes)
        write(context: context, id: id, response: response)
    }

    /// How many body bytes a stream to `path` may bring before it is answered unread: a Push Kit send carries up to
    /// 1000 tokens (about 130 KB, more with long tokens); everything else at most ``earlyRejectBytes``.
    static func bodyLimit(path: String?) -> Int {
        HMSMessageService.handles(path: path) ? HMSMessageService.maximumBodyBytes
            : HarmonyOSMessageService.handles(path: path) ? HarmonyOSMessageService.maximumBodyBytes : earlyRejectBytes
    }
}
