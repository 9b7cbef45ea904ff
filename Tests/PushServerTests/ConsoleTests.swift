import Foundation
import PushCore
@testable import PushServer
import Testing

/// `GET /console`: the embedded files are the ones in `Console/`, served with a strict Content-Security-Policy;
/// the page has no inline script or style, renders no data through HTML parsing, and labels every control.
@Suite(.timeLimit(.minutes(2))) struct ConsoleTests {
    static let consoleDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Console")

    @Test func theEmbeddedFilesAreTheFilesInConsole() throws {
        for (embedded, file) in [
            (ConsoleAssets.indexHTML, "index.html"), (ConsoleAssets.consoleJS, "console.js"),
            (ConsoleAssets.consoleCSS, "console.css"),
        ] {
            let text = try String(contentsOf: Self.consoleDirectory.appendingPathComponent(file), encoding: .utf8)
            #expect(embedded == text, "Console/\(file) changed: run python3 Console/embed.py")
        }
    }

    @Test func everyFileIsServedWithAStrictContentSecurityPolicy() async throws {
        let s = try await TestServer.start()
        for (path, type) in [
            ("/console", "text/html"), ("/console/", "text/html"), ("/console/console.js", "text/javascript"),
            ("/console/console.css", "text/css"),
        ] {
            let reply = try await s.request("GET", path)
            #expect(reply.status == 200, "\(path)")
            #expect(reply.headers["content-type"]?.hasPrefix(type) == true, "\(path): \(reply.headers["content-type"] ?? "")")
            let csp = try #require(reply.headers["content-security-policy"], "\(path) has no CSP")
            let directives = Dictionary(
                csp.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }.map { directive in
                    let parts = directive.split(separator: " ", maxSplits: 1).map(String.init)
                    return (parts[0], parts.count > 1 ? parts[1] : "")
                }, uniquingKeysWith: { a, _ in a })
            #expect(directives["default-src"] == "'none'")
            #expect(directives["script-src"] == "'self'")
            #expect(directives["style-src"] == "'self'")
            #expect(directives["connect-src"] == "'self'")
            #expect(directives["frame-ancestors"] == "'none'")
            #expect(directives["base-uri"] == "'none'")
            #expect(!csp.contains("unsafe"), "\(path): \(csp)")
            #expect(reply.headers["x-content-type-options"] == "nosniff")
            #expect(reply.headers["x-frame-options"] == "DENY")
            #expect(reply.headers["referrer-policy"] == "no-referrer")
            #expect(reply.headers["set-cookie"] == nil)
        }
        // The console's paths are in the 405 table too.
        let post = try await s.request("POST", "/console", contentType: "application/json", body: "{}")
        #expect(post.status == 405)
        #expect(post.headers["allow"] == "GET")
        try await s.stop()
    }

    @Test func thePageHasNoInlineScriptOrStyleAndNoHTMLSinks() throws {
        let html = ConsoleAssets.indexHTML
        // Every <script> loads a file; no <style> element, no style= or on…= attribute, no javascript: URL.
        for match in html.matches(of: /<script\b[^>]*>/) { #expect(match.output.contains("src=\"/console/"), "\(match.output)") }
        #expect(html.firstMatch(of: /<script\b[^>]*>[^<]+<\/script>/) == nil)
        #expect(html.firstMatch(of: /<style\b/) == nil)
        #expect(html.firstMatch(of: /\sstyle\s*=/) == nil)
        #expect(html.firstMatch(of: /\son[a-z]+\s*=/) == nil)
        #expect(!html.contains("javascript:"))
        #expect(!html.contains("http://") && !html.contains("https://"), "no external resource (works offline)")
        let js = ConsoleAssets.consoleJS
        for sink in ["innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", "document.cookie", "localStorage"] {
            #expect(!js.contains(sink), "console.js uses \(sink)")
        }
        #expect(js.contains("sessionStorage"))
        let withoutNamespace = js.replacingOccurrences(of: "'http://www.w3.org/2000/svg'", with: "")
        #expect(!withoutNamespace.contains("http://") && !withoutNamespace.contains("https://"))
    }

    @Test func theLoginPageSaysWhereTheDevelopmentKeyWasPrinted() throws {
        let html = ConsoleAssets.indexHTML
        let login = try #require(html.range(of: "<section id=\"login-view\"")).upperBound
        let end = try #require(html.range(of: "</section>", range: login..<html.endIndex)).lowerBound
        let page = html[login..<end]
        // The words of `pushctl serve`'s banner, so a newcomer can find the key in the terminal.
        #expect(page.contains("printed in the terminal running <code>make run</code>"))
        #expect(page.contains("has no API keys configured; this run accepts a development send key"))
    }

    @Test func everyControlHasALabel() throws {
        let html = ConsoleAssets.indexHTML
        let labelled = Set(html.matches(of: /<label for="([^"]+)"/).map { String($0.output.1) })
        var controls = 0
        for match in html.matches(of: /<(input|select|textarea)\b([^>]*)>/) {
            controls += 1
            let attributes = String(match.output.2)
            let id = attributes.firstMatch(of: /\bid="([^"]+)"/).map { String($0.output.1) }
            let ok = attributes.contains("aria-label=") || id.map(labelled.contains) == true
            #expect(ok, "unlabelled control: \(match.output.0)")
        }
        #expect(controls >= 12)
    }
}
