import Foundation

/// The URL- and filename-safe base64 alphabet without padding (RFC 4648 §5), as Web Push writes keys, secrets,
/// JWTs and topics. Decoding is strict: `+`, `/`, `=` and whitespace are refused, as a push service refuses them.
public enum StrictBase64URL {
    /// The bytes `text` encodes, or nil when it is not unpadded base64url (or has stray bits in its last character).
    public static func decode<S: StringProtocol>(_ text: S) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count % 4 != 1, utf8.allSatisfy(isAlphabet) else { return nil }
        var standard = String(decoding: utf8.map { $0 == UInt8(ascii: "-") ? UInt8(ascii: "+") : $0 == UInt8(ascii: "_") ? UInt8(ascii: "/") : $0 }, as: UTF8.self)
        while standard.utf8.count % 4 != 0 { standard.append("=") }
        guard let data = Data(base64Encoded: standard) else { return nil }
        let bytes = Array(data)
        // Canonical form only: the encoding of the decoded bytes must be the text itself.
        return encode(bytes) == String(decoding: utf8, as: UTF8.self) ? bytes : nil
    }

    /// `bytes` as unpadded base64url.
    public static func encode<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        var text = Data(bytes).base64EncodedString()
        while text.hasSuffix("=") { text.removeLast() }
        return text.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
    }

    /// One character of the base64url alphabet.
    static func isAlphabet(_ c: UInt8) -> Bool {
        (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c == UInt8(ascii: "-")
            || c == UInt8(ascii: "_")
    }
}
