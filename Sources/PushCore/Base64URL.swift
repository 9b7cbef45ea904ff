/// Base64url (RFC 4648 §5), the alphabet Web Push uses for keys, secrets and tokens. Encoding never pads;
/// decoding accepts the unpadded form browsers send and, strictly, the padded one (the right number of `=` and
/// nothing after them), and refuses the standard alphabet's `+` and `/`, whitespace and stray bits.
public enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    /// Each byte's value in the alphabet, or 0xFF for a byte outside it.
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, byte) in alphabet.enumerated() { table[Int(byte)] = UInt8(index) }
        return table
    }()

    /// True for a byte of the base64url alphabet (`A-Z a-z 0-9 - _`, no padding).
    public static func isAlphabet(_ byte: UInt8) -> Bool {
        (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte) || byte == 0x2D || byte == 0x5F
    }

    /// The bytes as base64url without padding.
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        let input = Array(bytes)
        let length = (input.count * 4 + 2) / 3
        return String(unsafeUninitializedCapacity: length) { out in
            alphabet.withUnsafeBufferPointer { alphabet in
                var index = 0
                var written = 0
                // The first `count` 6-bit groups of a 24-bit group, high first.
                func put(_ n: UInt32, _ count: Int) {
                    var shift: UInt32 = 18
                    for _ in 0..<count {
                        out[written] = alphabet[Int(n >> shift & 63)]
                        written += 1
                        shift &-= 6
                    }
                }
                while index + 3 <= input.count {
                    put(UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2]), 4)
                    index += 3
                }
                switch input.count - index {
                case 1: put(UInt32(input[index]) << 16, 2)
                case 2: put(UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8, 3)
                default: break
                }
                return written
            }
        }
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
            let value = values[Int(symbol)]
            guard value != 0xFF else { return nil }
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
