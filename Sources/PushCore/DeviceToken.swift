/// An APNs device token in canonical form: lowercase hex.
///
/// Apple documents tokens as variable length, so any length from ``minimumBytes`` to ``maximumBytes``
/// is accepted. Input may be hex in any case, or the `NSData` description that old iOS clients send
/// verbatim (`<740f4707 bebcf74f …>`), with surrounding whitespace.
public struct DeviceToken: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The smallest accepted token, in bytes.
    public static let minimumBytes = 8
    /// The largest accepted token, in bytes.
    public static let maximumBytes = 100

    /// Lowercase hex, two digits per byte.
    public let hex: String

    /// Parses a token, accepting hex in any case or Apple's `NSData` description form.
    /// - Throws: ``DeviceTokenError`` naming the rule that failed.
    public init(parsing input: String) throws(DeviceTokenError) {
        // Fast path: already canonical (every token the sender and the registry produce). No copy is made.
        if Self.isCanonical(input) {
            self.hex = input
            return
        }
        var text = Substring(input).trimmingASCIIWhitespace()
        if text.first == "<" || text.last == ">" {
            guard text.first == "<", text.last == ">" else { throw DeviceTokenError(.unbalancedBrackets, input) }
            text = text.dropFirst().dropLast()
        }
        var digits: [UInt8] = []
        digits.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"):
                digits.append(byte)
            case UInt8(ascii: "A")...UInt8(ascii: "F"):
                digits.append(byte + 32)
            case UInt8(ascii: " "):
                // NSData's description groups 4 bytes with single spaces; tolerate any spacing inside <>.
                continue
            default:
                throw DeviceTokenError(.notHex, input)
            }
        }
        if digits.isEmpty { throw DeviceTokenError(.empty, input) }
        if digits.count % 2 != 0 { throw DeviceTokenError(.oddLength, input) }
        let bytes = digits.count / 2
        if bytes < Self.minimumBytes || bytes > Self.maximumBytes {
            throw DeviceTokenError(.badLength(bytes: bytes), input)
        }
        self.hex = String(decoding: digits, as: UTF8.self)
    }

    /// Lowercase hex of an accepted length: exactly what the full parse would produce unchanged.
    private static func isCanonical(_ text: String) -> Bool {
        let count = text.utf8.count
        guard count % 2 == 0, count >= 2 * minimumBytes, count <= 2 * maximumBytes else { return false }
        return text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    /// A token read back from storage this library wrote in canonical form. Not validated: use only for
    /// values that passed ``init(parsing:)`` on the way in (streaming a million rows should not re-parse them).
    public init(trustedCanonicalHex hex: String) {
        self.hex = hex
    }

    /// Creates a token from raw bytes (for example a token read from a binary source).
    public init(bytes: some Collection<UInt8>) throws(DeviceTokenError) {
        let table = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for b in bytes {
            out.append(table[Int(b >> 4)])
            out.append(table[Int(b & 0x0f)])
        }
        try self.init(parsing: String(decoding: out, as: UTF8.self))
    }

    /// The token's bytes.
    public var bytes: [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(hex.utf8.count / 2)
        var high: UInt8 = 0
        for (i, c) in hex.utf8.enumerated() {
            let v = c <= UInt8(ascii: "9") ? c - UInt8(ascii: "0") : c - UInt8(ascii: "a") + 10
            if i % 2 == 0 { high = v } else { result.append(high << 4 | v) }
        }
        return result
    }

    /// A form safe for logs: the first 6 and last 4 hex digits (`740f47…78ad`).
    public var masked: String { Self.mask(hex) }

    /// Masks any token-like string for logs without validating it.
    public static func mask(_ text: String) -> String {
        let chars = Array(text)
        guard chars.count > 12 else { return String(repeating: "*", count: chars.count) }
        return String(chars.prefix(6)) + "…" + String(chars.suffix(4))
    }

    /// The canonical hex form.
    public var description: String { hex }

    /// Orders tokens by their canonical hex, which is also the registry's key order.
    public static func < (lhs: DeviceToken, rhs: DeviceToken) -> Bool { lhs.hex < rhs.hex }
}

/// Why a device token was rejected.
public struct DeviceTokenError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The rule that failed.
    public enum Rule: Sendable, Equatable {
        /// Nothing but whitespace (or `<>`).
        case empty
        /// A character other than hex digits and the spaces of the `NSData` form.
        case notHex
        /// An odd number of hex digits: a token is whole bytes.
        case oddLength
        /// Fewer than 8 or more than 100 bytes.
        case badLength(bytes: Int)
        /// A `<` without a `>` or the other way round.
        case unbalancedBrackets
    }

    /// The rule that failed.
    public let rule: Rule
    /// The rejected input, masked so the error can be logged.
    public let maskedInput: String

    init(_ rule: Rule, _ input: String) {
        self.rule = rule
        self.maskedInput = DeviceToken.mask(input)
    }

    /// A one-line message naming the rule.
    public var description: String {
        switch rule {
        case .empty: return "device token is empty"
        case .notHex: return "device token must be hex digits (or Apple's <xxxxxxxx …> form): \(maskedInput)"
        case .oddLength: return "device token has an odd number of hex digits: \(maskedInput)"
        case .badLength(let n):
            return "device token is \(n) bytes; accepted lengths are \(DeviceToken.minimumBytes)…\(DeviceToken.maximumBytes) bytes"
        case .unbalancedBrackets: return "device token has an unbalanced '<' or '>': \(maskedInput)"
        }
    }
}

extension Substring {
    /// Drops leading and trailing spaces, tabs, CRs and LFs. Works on bytes: "\r\n" is one `Character`, which
    /// compares equal to neither "\r" nor "\n".
    func trimmingASCIIWhitespace() -> Substring {
        func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D }
        let bytes = utf8
        guard let first = bytes.firstIndex(where: { !isSpace($0) }), let last = bytes.lastIndex(where: { !isSpace($0) }) else {
            return self[endIndex...]
        }
        return self[first...last]
    }
}
