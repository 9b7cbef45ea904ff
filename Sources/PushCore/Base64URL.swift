/// Base64url (RFC 4648 §5), the alphabet Web Push uses for keys, secrets and tokens. Encoding never pads;
/// decoding accepts the unpadded form browsers send and, strictly, the padded one (the right number of `=` and
/// nothing after them), and refuses the standard alphabet's `+` and `/`, whitespace and stray bits.
public enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    private static let values: [UInt8: UInt8] = {
        var table: [UInt8: UInt8] = [:]
        for (index, byte) in alphabet.enumerated() { table[byte] = UInt8(index) }
        return table
    }()

    /// True for a byte of the base64url alphabet (`A-Z a-z 0-9 - _`, no padding).
    public static func isAlphabet(_ byte: UInt8) -> Bool {
        (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte) || byte == 0x2D || byte == 0x5F
    }

    /// The bytes as base64url without padding.
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        let input = Array(bytes)
        var out: [UInt8] = []
        out.reserveCapacity((input.count * 4 + 2) / 3)
        var index = 0
        while index + 3 <= input.count {
            let n = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
            out += [alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)], alphabet[Int(n >> 6 & 63)], alphabet[Int(n & 63)]]
            index += 3
        }
        switch input.count - index {
        case 1:
            let n = UInt32(input[index]) << 16
            out += [alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)]]
        case 2:
            let n = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8
            out += [alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)], alphabet[Int(n >> 6 & 63)]]
        default: break
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The decoded bytes, or nil when `text` is not canonical base64url (see the type).
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        var symbols = Array(text.utf8)
        if let firstPad = symbols.firstIndex(of: UInt8(ascii: "=")) {
            // Padding is accepted only as RFC 4648 writes it: to a multiple of 4, and only `=` after the first.
            let padding = symbols.count - firstPad
            guard symbols.count % 4 == 0, padding <= 2, symbols[firstPad...].allSatisfy({ $0 == UInt8(ascii: "=") })
            else { return nil }
            symbols.removeLast(padding)
        }
        guard symbols.count % 4 != 1 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(symbols.count * 3 / 4)
        var buffer: UInt32 = 0
        var bits = 0
        for symbol in symbols {
            guard let value = values[symbol] else { return nil }
            buffer = buffer << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(buffer >> UInt32(bits) & 0xFF))
            }
        }
        // The leftover bits must be zero: otherwise two texts would decode to the same bytes.
        guard buffer & ((1 << UInt32(bits)) - 1) == 0 else { return nil }
        return out
    }
}
