import Foundation

/// An IPv4 or IPv6 address, as its bytes, with the rule that keeps pushes to clients' endpoints away from this
/// machine and its network (server-side request forgery): ``refusal`` names why an address must never be sent
/// to. Pure: parsing a literal and judging it. Resolving a host name is I/O and belongs to the transport, which
/// must judge every address a name resolves to with ``refusal`` (through ``WebPushHostPolicy/refusal(address:for:)``)
/// before connecting, and connect only to an address it judged.
public struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    /// 4 bytes (IPv4) or 16 (IPv6), network order.
    public let bytes: [UInt8]

    /// An address from its 4 or 16 bytes; nil for any other length.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 4 || bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    /// An address from its text: dotted-quad IPv4 (four decimal parts 0-255, no leading zeros) or IPv6
    /// (RFC 4291 §2.2, `::` and a dotted-quad tail allowed; no brackets, no zone). Nil for anything else,
    /// including the octal, hexadecimal and short forms `inet_aton` would accept.
    public init?(literal text: some StringProtocol) {
        if let v4 = Self.parseIPv4(Substring(text)) {
            bytes = v4
        } else if let v6 = Self.parseIPv6(Substring(text)) {
            bytes = v6
        } else {
            return nil
        }
    }

    /// True for an IPv4 address.
    public var isIPv4: Bool { bytes.count == 4 }

    /// The IPv4 address an IPv6 address carries and that a packet to it reaches: IPv4-mapped (`::ffff:a.b.c.d`),
    /// IPv4-compatible (`::a.b.c.d`, deprecated), NAT64 (`64:ff9b::/96`) and 6to4 (`2002::/16`). Nil otherwise.
    public var embeddedIPv4: IPAddress? {
        guard bytes.count == 16 else { return nil }
        let b = bytes
        if b[0..<10].allSatisfy({ $0 == 0 }) && b[10] == 0xFF && b[11] == 0xFF { return IPAddress(bytes: Array(b[12..<16])) }
        if b[0..<12].allSatisfy({ $0 == 0 }) && !(b[12..<15].allSatisfy({ $0 == 0 }) && b[15] <= 1) {
            return IPAddress(bytes: Array(b[12..<16]))
        }
        if b[0..<12] == [0x00, 0x64, 0xFF, 0x9B, 0, 0, 0, 0, 0, 0, 0, 0] { return IPAddress(bytes: Array(b[12..<16])) }
        if b[0] == 0x20 && b[1] == 0x02 { return IPAddress(bytes: Array(b[2..<6])) }
        return nil
    }

    /// Why a push must never be sent to this address (a phrase: "a loopback address"), or nil for a public
    /// unicast address. Refused: unspecified, loopback, private (RFC 1918, IPv6 unique local), link-local,
    /// shared (RFC 6598), multicast, broadcast and reserved ranges, and any of these carried inside an IPv6
    /// address (``embeddedIPv4``).
    public var refusal: String? {
        if let inner = embeddedIPv4 { return inner.refusal.map { $0 + " (inside \(self))" } }
        let b = bytes
        if b.count == 4 {
            switch (b[0], b[1]) {
            case (0, _): return "an unspecified (0.0.0.0/8) address"
            case (127, _): return "a loopback address"
            case (10, _), (172, 16...31), (192, 168): return "a private address"
            case (169, 254): return "a link-local address"
            case (100, 64...127): return "a shared (carrier-grade NAT) address"
            case (192, 0) where b[2] == 0: return "a reserved (IETF protocol) address"
            case (198, 18...19): return "a reserved (benchmarking) address"
            case (224...239, _): return "a multicast address"
            case (240...255, _): return "a reserved or broadcast address"
            default: return nil
            }
        }
        if b.allSatisfy({ $0 == 0 }) { return "the unspecified address" }
        if b[0..<15].allSatisfy({ $0 == 0 }) && b[15] == 1 { return "a loopback address" }
        if b[0] == 0xFE && b[1] & 0xC0 == 0x80 { return "a link-local address" }
        if b[0] == 0xFE && b[1] & 0xC0 == 0xC0 { return "a site-local address" }
        if b[0] & 0xFE == 0xFC { return "a private (unique local) address" }
        if b[0] == 0xFF { return "a multicast address" }
        if b[0..<10].allSatisfy({ $0 == 0 }) { return "a reserved address" }  // ::/80 not IPv4-carrying above
        return nil
    }

    public var description: String {
        if bytes.count == 4 { return bytes.map(String.init).joined(separator: ".") }
        let groups = stride(from: 0, to: 16, by: 2).map { UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]) }
        // RFC 5952: the longest run (>= 2) of zero groups becomes "::".
        var best = (start: -1, length: 0)
        var index = 0
        while index < 8 {
            if groups[index] == 0 {
                var end = index
                while end < 8 && groups[end] == 0 { end += 1 }
                if end - index > best.length && end - index >= 2 { best = (index, end - index) }
                index = end
            } else {
                index += 1
            }
        }
        func hex(_ range: Range<Int>) -> String { groups[range].map { String($0, radix: 16) }.joined(separator: ":") }
        if best.start < 0 { return hex(0..<8) }
        return hex(0..<best.start) + "::" + hex((best.start + best.length)..<8)
    }

    private static func parseIPv4(_ text: Substring) -> [UInt8]? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var out: [UInt8] = []
        for part in parts {
            guard (1...3).contains(part.count), part.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
                  part.count == 1 || part.first != "0", let value = UInt8(part)
            else { return nil }
            out.append(value)
        }
        return out
    }

    private static func parseIPv6(_ text: Substring) -> [UInt8]? {
        // Every IPv6 literal has a colon: a host name (what most endpoints have) is refused before any splitting.
        guard text.utf8.contains(UInt8(ascii: ":")), text.count >= 2, text.count <= 45 else { return nil }
        let halves = text.components(separatedBy: "::")
        guard halves.count <= 2 else { return nil }
        func groups(_ part: String, allowIPv4Tail: Bool) -> [UInt16]? {
            if part.isEmpty { return [] }
            let pieces = part.split(separator: ":", omittingEmptySubsequences: false)
            var out: [UInt16] = []
            for (index, piece) in pieces.enumerated() {
                if allowIPv4Tail && index == pieces.count - 1 && piece.contains(".") {
                    guard let v4 = parseIPv4(piece) else { return nil }
                    out += [UInt16(v4[0]) << 8 | UInt16(v4[1]), UInt16(v4[2]) << 8 | UInt16(v4[3])]
                    continue
                }
                guard (1...4).contains(piece.count), piece.allSatisfy(\.isHexDigit), let value = UInt16(piece, radix: 16)
                else { return nil }
                out.append(value)
            }
            return out
        }
        let all: [UInt16]
        if halves.count == 2 {
            guard let head = groups(halves[0], allowIPv4Tail: false), let tail = groups(halves[1], allowIPv4Tail: true),
                  head.count + tail.count <= 7
            else { return nil }
            all = head + Array(repeating: 0, count: 8 - head.count - tail.count) + tail
        } else {
            guard let only = groups(halves[0], allowIPv4Tail: true), only.count == 8 else { return nil }
            all = only
        }
        return all.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
    }
}
