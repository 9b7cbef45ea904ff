import Foundation
import PushCore
import Testing

/// ``WebPushEndpoint/init(parsing:field:)`` works on UTF-8 bytes since it is on the broadcast path (every stored Web
/// Push device is parsed when a broadcast reads it); the String parser it replaced is kept here as the oracle: over
/// ordinary, odd and hostile endpoints both accept the same ones with the same canonical URL and refuse the others
/// with the same message.
@Suite struct WebPushEndpointByteParserTests {
    /// The String-based parser as it was (a93a6e4): the canonical URL, or throws the refusal.
    static func reference(parsing text: String, field: String = "endpoint") throws(FieldError) -> String {
        func refuse(_ why: String) -> FieldError { FieldError(field: field, message: "\(field) \(why)") }
        guard !text.isEmpty else { throw refuse("must not be empty") }
        guard text.utf8.count <= WebPushEndpoint.maximumLength else { throw refuse("must be at most \(WebPushEndpoint.maximumLength) characters") }
        guard text.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw refuse("must be printable ASCII without spaces (a URL as PushSubscription.toJSON() gives it)")
        }
        let schemeEnd = text.range(of: "://")
        guard let schemeEnd, text[..<schemeEnd.lowerBound].lowercased() == "https" else {
            throw refuse("must be an https URL, not '\(text.prefix(40))'")
        }
        let rest = text[schemeEnd.upperBound...]
        guard !rest.contains("#") else { throw refuse("must not have a fragment") }
        let pathStart = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
        let authority = rest[..<pathStart]
        guard pathStart < rest.endIndex, rest[pathStart] == "/", rest.index(after: pathStart) < rest.endIndex else {
            throw refuse("must have a path after the host (the push service's subscription id)")
        }
        guard !authority.contains("@") else { throw refuse("must not carry user information") }
        let pathAndQuery = rest[pathStart...]
        let path = pathAndQuery.prefix(while: { $0 != "?" })
        for segment in path.split(separator: "/", omittingEmptySubsequences: false) {
            let decoded = segment.lowercased().replacingOccurrences(of: "%2e", with: ".")
            if decoded == "." || decoded == ".." {
                throw refuse("must not have a '\(segment)' path segment (a dot segment names another path)")
            }
        }

        var hostText = Substring(authority)
        var portText: Substring?
        if hostText.hasPrefix("[") {
            guard let close = hostText.firstIndex(of: "]") else { throw refuse("has an unclosed IPv6 literal") }
            let after = hostText[hostText.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw refuse("has characters after its IPv6 literal") }
                portText = after.dropFirst()
            }
            hostText = hostText[hostText.index(after: hostText.startIndex)..<close]
            guard let literal = IPAddress(literal: hostText), !literal.isIPv4 else {
                throw refuse("has an invalid IPv6 literal '[\(hostText.prefix(45))]' (zones are not allowed)")
            }
        } else if let colon = hostText.lastIndex(of: ":") {
            portText = hostText[hostText.index(after: colon)...]
            hostText = hostText[..<colon]
        }
        var port = 443
        if let portText {
            guard (1...5).contains(portText.count), portText.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
                  let value = Int(portText), (1...65535).contains(value)
            else { throw refuse("has an invalid port '\(portText.prefix(10))'") }
            port = value
        }
        let host = hostText.lowercased()
        let literal = IPAddress(literal: host)
        if let literal, !literal.isIPv4, !authority.hasPrefix("[") {
            throw refuse("must write an IPv6 address in brackets")
        }
        if literal == nil, let problem = hostNameProblem(host) { throw refuse(problem) }
        let canonicalHost = literal.map(\.description) ?? host
        let name = literal.map { $0.isIPv4 ? canonicalHost : "[\(canonicalHost)]" } ?? canonicalHost
        return "https://" + (port == 443 ? name : "\(name):\(port)") + pathAndQuery
    }

    /// The host-name rule as it was (a93a6e4).
    static func hostNameProblem(_ host: String) -> String? {
        guard !host.isEmpty else { return "has no host" }
        guard host.utf8.count <= 253 else { return "has a host name longer than 253 characters" }
        let labels = host.split(separator: ".", omittingEmptySubsequences: false)
        for label in labels {
            guard (1...63).contains(label.count),
                  label.utf8.allSatisfy({ (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D }),
                  label.first != "-", label.last != "-"
            else { return "has an invalid host name '\(host.prefix(64))' (letters, digits and hyphens in dot-separated labels)" }
        }
        // A name whose last label is numeric is an address in some resolver's eyes (`inet_aton`: 127.1, 2130706433).
        if let last = labels.last, last.utf8.allSatisfy({ (0x30...0x39).contains($0) }) || last.hasPrefix("0x") {
            return "has a host '\(host.prefix(64))' that is neither a DNS name nor a dotted-quad address"
        }
        return nil
    }

    static let cases: [String] = {
        var cases = [
            "https://web.push.apple.com/QGmZ?x=1", "https://web.push.apple.com:443/QGmZ?x=1", "HTTPS://WEB.Push.Apple.com/QGmZ?x=1",
            "https://web.push.apple.com:0443/QGmZ?x=1", "Https://web.push.apple.com:00443/QGmZ?x=1", "https://Push.Example.net:8443/AbC/d",
            "https://[2001:DB8:0::1]:443/x", "https://[2001:db8::1]:8443/x", "https://127.0.0.1:4443/wp/1", "https://[::1]:4443/s/1",
            "https://fcm.googleapis.com/fcm/send/abc:APA91", "https://updates.push.services.mozilla.com/wpush/v2/gAAA",
            "https://fcm.googleapis.com/a/../b", "https://fcm.googleapis.com/./x", "https://fcm.googleapis.com/a/.",
            "https://fcm.googleapis.com/..", "https://fcm.googleapis.com/a/%2e%2E/b", "https://fcm.googleapis.com/a/.%2e/b",
            "https://fcm.googleapis.com/%2E/x", "https://fcm.googleapis.com/a/..?q=1", "https://fcm.googleapis.com/a/b.",
            "https://fcm.googleapis.com/...", "https://fcm.googleapis.com/.well/x", "https://fcm.googleapis.com/x?path=../y",
            "https://h/%2e%2e%2e", "https://h/%2", "https://h/%2e%", "https://h/%%2e2e", "https://h/.%2", "https://h//x//",
            "", " https://h/x", "https://h/x y", "https://h/\u{e9}", "http://h/x", "https:/h/x", "https//h/x", "ftp://h/x",
            "https://h", "https://h/", "https://h?x", "https://h/?x", "https://h/x#f", "https://u@h/x", "https://u:p@h:1/x",
            "https://h:/x", "https://h:0/x", "https://h:65535/x", "https://h:65536/x", "https://h:123456/x", "https://h:+1/x",
            "https://h:1a/x", "https://[::1/x", "https://[::1]x/x", "https://[::1]:/x", "https://[::1]:99999/x",
            "https://[127.0.0.1]/x", "https://[fe80::1%25eth0]/x", "https://::1/x", "https://1::1/x", "https://[::ffff:1.2.3.4]/x",
            "https://127.1/x", "https://2130706433/x", "https://0x7f.1/x", "https://a.0x10/x", "https://a-.b/x", "https://-a.b/x",
            "https://a..b/x", "https://a.b./x", "https://.a/x", "https://a_b.c/x", "https://A.B.C/x", "https://01.2.3.4/x",
            "https://1.2.3.4.5/x", "https://256.1.1.1/x", "https://xn--bcher-kva.example/x", "https://h://x/y", "hTtPs://h/x",
            "https://" + String(repeating: "a", count: 64) + ".com/x", "https://" + String(repeating: "a.", count: 127) + "b/x",
            "https://h/" + String(repeating: "x", count: 2040), "https://h/" + String(repeating: "x", count: 2041),
            "https://[2001:db8:0:0:0:0:0:1]:0443/a/b?c=d&e=%2e%2e",
        ]
        cases += cases.map { $0.uppercased() }
        return cases
    }()

    @Test func theByteParserAcceptsAndRefusesExactlyAsTheStringParserDid() {
        for text in Self.cases {
            let expected = Result { () throws(FieldError) in try Self.reference(parsing: text, field: "subscription.endpoint") }
            let actual = Result { () throws(FieldError) in try WebPushEndpoint(parsing: text, field: "subscription.endpoint").url }
            #expect(actual == expected, "\(text)")
        }
    }

    @Test func theHostAndPortAreThoseOfTheCanonicalURL() throws {
        let endpoint = try WebPushEndpoint(parsing: "HTTPS://[2001:DB8:0::1]:08443/x?y")
        #expect(endpoint.host == "2001:db8::1" && endpoint.port == 8443 && endpoint.address != nil)
        #expect(endpoint.url == "https://[2001:db8::1]:8443/x?y" && endpoint.origin == "https://[2001:db8::1]:8443")
        let named = try WebPushEndpoint(parsing: "https://Web.Push.Apple.com/QG")
        #expect(named.host == "web.push.apple.com" && named.port == 443 && named.address == nil)
    }
}
