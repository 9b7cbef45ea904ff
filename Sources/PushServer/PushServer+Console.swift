import Hummingbird
import NIOCore

extension PushServer {
    /// The Content-Security-Policy of every console response: only this server's own files, no inline script
    /// or style, no framing, no plugins; the API is called on the same origin.
    static let consoleCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        + "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

    func addConsoleRoutes(to router: Router<BasicRequestContext>) {
        // Hummingbird serves `/console/` here too (a trailing slash is ignored).
        router.get("/console") { _, _ in Self.consoleFile(ConsoleAssets.indexHTML, type: "text/html; charset=utf-8") }
        router.get("/console/console.js") { _, _ in
            Self.consoleFile(ConsoleAssets.consoleJS, type: "text/javascript; charset=utf-8")
        }
        router.get("/console/console.css") { _, _ in
            Self.consoleFile(ConsoleAssets.consoleCSS, type: "text/css; charset=utf-8")
        }
    }

    /// One of the console's static files, with the security headers. The console holds no secret: the key the
    /// user types stays in the tab's sessionStorage and goes only into `Authorization` headers.
    static func consoleFile(_ text: String, type: String) -> Response {
        var headers: HTTPFields = [:]
        headers[.contentType] = type
        headers[.contentSecurityPolicy] = consoleCSP
        headers[.xContentTypeOptions] = "nosniff"
        headers[HTTPFields.Element.Name("X-Frame-Options")!] = "DENY"
        headers[HTTPFields.Element.Name("Referrer-Policy")!] = "no-referrer"
        headers[.cacheControl] = "no-cache"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}
