import Foundation

/// A Web Push subscription's endpoint (RFC 8030 §5): the `https` URL the push service gave the browser, parsed
/// strictly enough that what we judge (the host and port in ``WebPushHostPolicy``) is what the transport connects
/// to. Refused: another scheme, user information, a fragment, a missing path, a port outside 1-65535, spaces or
/// non-ASCII, a host that is neither a DNS name nor a literal address (no trailing dot, no numeric or
/// `inet_aton`-style names, no IPv6 zone), a `.` or `..` path segment (also percent-encoded).
///
/// One endpoint has one form (``url``): the scheme and host lower case, the default port dropped, an IPv6 literal
/// compressed, so `HTTPS://Host:0443/x`, `https://host:443/x` and `https://host/x` are one device. Dot segments are
/// refused rather than resolved: a push service never mints them, and a server that resolves them would reach
/// another path than the one registered.
public struct WebPushEndpoint: Sendable, Hashable, CustomStringConvertible {
    /// The longest endpoint accepted. The push services' endpoints are a few hundred characters.
    public static let maximumLength = 2048

    /// The URL in its canonical form (see above): what is stored, keyed (`DeviceKey`) and posted to.
    public let url: String
    /// The host, lowercased; an IPv6 literal without its brackets.
    public let host: String
    /// The port (443 when the URL names none).
    public let port: Int
    /// The host's address when the host is a literal address.
    public let address: IPAddress?

    /// `https://host[:port]`: the origin VAPID's `aud` names and per-origin state (connections, tokens, backoff)
    /// is keyed by. The port appears only when it is not 443.
    public var origin: String { "https://" + authority }

    /// `host[:port]` as it appears in a URL (an IPv6 literal in brackets; the port only when not 443).
    public var authority: String { Self.authority(host: host, port: port, address: address) }

    private static func authority(host: String, port: Int, address: IPAddress?) -> String {
        let name = address.map { $0.isIPv4 ? host : "[\(host)]" } ?? host
        return port == 443 ? name : "\(name):\(port)"
    }

    public var description: String { url }

    /// Parses an endpoint URL; the error names `field` (the endpoint's field in the request).
    public init(parsing text: String, field: String = "endpoint") throws(FieldError) {
        func refuse(_ why: String) -> FieldError { FieldError(field: field, message: "\(field) \(why)") }
        guard !text.isEmpty else { throw refuse("must not be empty") }
        guard text.utf8.count <= Self.maximumLength else { throw refuse("must be at most \(Self.maximumLength) characters") }
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
        if literal == nil, let problem = Self.hostNameProblem(host) { throw refuse(problem) }
        let canonicalHost = literal.map(\.description) ?? host
        self.host = canonicalHost
        self.port = port
        self.address = literal
        self.url = "https://" + Self.authority(host: canonicalHost, port: port, address: literal) + pathAndQuery
    }

    /// Why `host` (lowercased, not a literal address) is not an acceptable DNS name, or nil.
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
}
