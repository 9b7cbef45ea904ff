import Foundation

/// A Web Push subscription's endpoint (RFC 8030 §5): the `https` URL the push service gave the browser (or a
/// UnifiedPush distributor gave an app, which may also be `http`: ``init(parsing:field:allowingHTTP:)``), parsed
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
    /// False for an `http` endpoint (UnifiedPush only; its default port is 80).
    public let isSecure: Bool
    /// The host, lowercased; an IPv6 literal without its brackets.
    public let host: String
    /// The port (443 when the URL names none).
    public let port: Int
    /// The host's address when the host is a literal address.
    public let address: IPAddress?

    /// `https://host[:port]` (`http://` for an `http` endpoint): the origin VAPID's `aud` names and per-origin state
    /// (connections, tokens, backoff) is keyed by. The port appears only when it is not the scheme's default.
    public var origin: String { (isSecure ? "https://" : "http://") + authority }

    /// `host[:port]` as it appears in a URL (an IPv6 literal in brackets; the port only when not the scheme's
    /// default, 443 or 80).
    public var authority: String { Self.authority(host: host, port: port, address: address, secure: isSecure) }

    private static func authority(host: String, port: Int, address: IPAddress?, secure: Bool) -> String {
        let name = address.map { $0.isIPv4 ? host : "[\(host)]" } ?? host
        return port == (secure ? 443 : 80) ? name : "\(name):\(port)"
    }

    public var description: String { url }

    /// Parses an endpoint URL; the error names `field` (the endpoint's field in the request). `allowingHTTP` accepts
    /// an `http` URL too (UnifiedPush's endpoints may be either, SERV_1.2.0; Web Push's are https only). Works on the
    /// text's UTF-8 bytes (printable ASCII once the first check passes): every stored Web Push device is parsed again
    /// when a broadcast reads it, so this is on the send path.
    public init(parsing text: String, field: String = "endpoint", allowingHTTP: Bool = false) throws(FieldError) {
        func refuse(_ why: String) -> FieldError { FieldError(field: field, message: "\(field) \(why)") }
        var text = text
        let parsed: Result<Parts, FieldError> = text.withUTF8 { bytes in
            do throws(FieldError) {
                return .success(try Self.parts(of: bytes, allowingHTTP: allowingHTTP, refuse: refuse))
            } catch {
                return .failure(error)
            }
        }
        let parts = try parsed.get()
        host = parts.host
        port = parts.port
        address = parts.address
        isSecure = parts.secure
        url = (parts.secure ? "https://" : "http://")
            + Self.authority(host: parts.host, port: parts.port, address: parts.address, secure: parts.secure) + parts.pathAndQuery
    }

    /// What ``init(parsing:field:allowingHTTP:)`` finds in an endpoint's bytes.
    private struct Parts {
        var host: String
        var port: Int
        var address: IPAddress?
        var pathAndQuery: String
        var secure: Bool
    }

    private static func parts(
        of text: UnsafeBufferPointer<UInt8>, allowingHTTP: Bool, refuse: (String) -> FieldError
    ) throws(FieldError) -> Parts {
        func string(_ range: Range<Int>) -> String { String(decoding: UnsafeBufferPointer(rebasing: text[range]), as: UTF8.self) }
        func prefix(_ range: Range<Int>, _ length: Int) -> String {
            string(range.lowerBound..<min(range.upperBound, range.lowerBound + length))
        }
        let slash = UInt8(ascii: "/"), question = UInt8(ascii: "?"), colon = UInt8(ascii: ":")
        guard !text.isEmpty else { throw refuse("must not be empty") }
        guard text.count <= maximumLength else { throw refuse("must be at most \(maximumLength) characters") }
        guard text.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw refuse("must be printable ASCII without spaces (a URL as PushSubscription.toJSON() gives it)")
        }
        // The scheme: up to the first "://", which must be https in any case.
        var schemeEnd: Int?
        if text.count >= 3 {
            for index in 0...(text.count - 3) where text[index] == colon && text[index + 1] == slash && text[index + 2] == slash {
                schemeEnd = index
                break
            }
        }
        let secure = schemeEnd == 5 && asciiLowercased(text[0..<5]).elementsEqual("https".utf8)
        let plain = allowingHTTP && schemeEnd == 4 && asciiLowercased(text[0..<4]).elementsEqual("http".utf8)
        guard let schemeEnd, secure || plain else {
            throw refuse("must be an \(allowingHTTP ? "http or https" : "https") URL, not '\(prefix(0..<text.count, 40))'")
        }
        let restStart = schemeEnd + 3
        let rest = restStart..<text.count
        guard !text[rest].contains(UInt8(ascii: "#")) else { throw refuse("must not have a fragment") }
        let pathStart = text[rest].firstIndex(where: { $0 == slash || $0 == question }) ?? text.count
        let authority = restStart..<pathStart
        guard pathStart < text.count, text[pathStart] == slash, pathStart + 1 < text.count else {
            throw refuse("must have a path after the host (the push service's subscription id)")
        }
        guard !text[authority].contains(UInt8(ascii: "@")) else { throw refuse("must not carry user information") }
        let pathEnd = text[pathStart...].firstIndex(of: question) ?? text.count
        // Path segments: ".", "..", and either spelled with %2e, name another path.
        var segmentStart = pathStart
        var index = pathStart
        while index <= pathEnd {
            if index == pathEnd || text[index] == slash {
                let segment = segmentStart..<index
                if isDotSegment(text[segment]) {
                    throw refuse("must not have a '\(string(segment))' path segment (a dot segment names another path)")
                }
                segmentStart = index + 1
            }
            index += 1
        }

        var hostRange = authority
        var portRange: Range<Int>?
        let bracketed = text[authority].first == UInt8(ascii: "[")
        if bracketed {
            guard let close = text[authority].firstIndex(of: UInt8(ascii: "]")) else { throw refuse("has an unclosed IPv6 literal") }
            let after = (close + 1)..<authority.upperBound
            if !after.isEmpty {
                guard text[after.lowerBound] == colon else { throw refuse("has characters after its IPv6 literal") }
                portRange = (after.lowerBound + 1)..<after.upperBound
            }
            hostRange = (authority.lowerBound + 1)..<close
            guard let literal = IPAddress(literal: string(hostRange)), !literal.isIPv4 else {
                throw refuse("has an invalid IPv6 literal '[\(prefix(hostRange, 45))]' (zones are not allowed)")
            }
        } else if let colonIndex = text[authority].lastIndex(of: colon) {
            portRange = (colonIndex + 1)..<authority.upperBound
            hostRange = authority.lowerBound..<colonIndex
        }
        var port = secure ? 443 : 80
        if let portRange {
            var value = 0
            guard (1...5).contains(portRange.count), text[portRange].allSatisfy({ (0x30...0x39).contains($0) }) else {
                throw refuse("has an invalid port '\(prefix(portRange, 10))'")
            }
            for digit in text[portRange] { value = value * 10 + Int(digit - 0x30) }
            guard (1...65535).contains(value) else { throw refuse("has an invalid port '\(prefix(portRange, 10))'") }
            port = value
        }
        let host = String(decoding: asciiLowercased(text[hostRange]), as: UTF8.self)
        let literal = IPAddress(literal: host)
        if let literal, !literal.isIPv4, !bracketed {
            throw refuse("must write an IPv6 address in brackets")
        }
        if literal == nil, let problem = hostNameProblem(host) { throw refuse(problem) }
        return Parts(
            host: literal.map(\.description) ?? host, port: port, address: literal, pathAndQuery: string(pathStart..<text.count),
            secure: secure)
    }

    /// The bytes with A-Z lowered (ASCII only: the text has passed the printable-ASCII check).
    private static func asciiLowercased(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) -> [UInt8] {
        bytes.map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 }
    }

    /// True for `.` and `..`, each dot possibly written `%2e` or `%2E`.
    private static func isDotSegment(_ segment: Slice<UnsafeBufferPointer<UInt8>>) -> Bool {
        var dots = 0
        var index = segment.startIndex
        while index < segment.endIndex {
            if segment[index] == UInt8(ascii: ".") {
                index += 1
            } else if segment[index] == UInt8(ascii: "%"), index + 2 < segment.endIndex, segment[index + 1] == UInt8(ascii: "2"),
                      segment[index + 2] | 0x20 == UInt8(ascii: "e") {
                index += 3
            } else {
                return false
            }
            dots += 1
            if dots > 2 { return false }
        }
        return dots >= 1
    }

    /// Why `host` (lowercased, not a literal address) is not an acceptable DNS name, or nil.
    static func hostNameProblem(_ host: String) -> String? {
        guard !host.isEmpty else { return "has no host" }
        guard host.utf8.count <= 253 else { return "has a host name longer than 253 characters" }
        let hyphen = UInt8(ascii: "-")
        let labels = host.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        for label in labels {
            guard (1...63).contains(label.count),
                  label.allSatisfy({ (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == hyphen }),
                  label.first != hyphen, label.last != hyphen
            else { return "has an invalid host name '\(host.prefix(64))' (letters, digits and hyphens in dot-separated labels)" }
        }
        // A name whose last label is numeric is an address in some resolver's eyes (`inet_aton`: 127.1, 2130706433).
        if let last = labels.last, last.allSatisfy({ (0x30...0x39).contains($0) }) || last.starts(with: "0x".utf8) {
            return "has a host '\(host.prefix(64))' that is neither a DNS name nor a dotted-quad address"
        }
        return nil
    }
}
