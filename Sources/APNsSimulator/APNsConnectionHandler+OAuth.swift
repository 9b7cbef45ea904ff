import NIOCore
import NIOHTTP2

extension APNsConnectionHandler {
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
