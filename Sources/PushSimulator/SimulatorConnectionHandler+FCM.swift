import NIOCore
import NIOHTTP2

extension SimulatorConnectionHandler {
    /// Answers a request to the OAuth token endpoint (``OAuthTokenService``) on this HTTP/2 connection.
    func processTokenRequest(
        context: ChannelHandlerContext, id: HTTP2StreamID, head: RequestValidator.Head, body: [UInt8], bodyBytes: Int
    ) {
        let response = core.oauth.respond(
            method: head.method, path: head.path, authority: head.authority, contentType: head.contentType, body: body,
            bodyBytes: bodyBytes)
        write(context: context, id: id, response: response)
    }
}

extension SimulatorConnectionHandler {
    /// Answers an FCM HTTP v1 send (``FCMMessageService``) on this HTTP/2 connection.
    func processFCMSend(
        context: ChannelHandlerContext, id: HTTP2StreamID, head: RequestValidator.Head, body: [UInt8], bodyBytes: Int
    ) {
        let response = core.fcm.respond(
            method: head.method, path: head.path, authorization: head.authorization, body: body, bodyBytes: bodyBytes,
            faults: core.faults, chance: { self.rng.chance($0) })
        write(context: context, id: id, response: response)
    }
}
