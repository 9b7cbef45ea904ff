/// Just enough DER to write and (leniently) read Apple's push-certificate extensions. Not a general parser:
/// malformed input ends the walk instead of throwing, so odd certificates still yield what is readable.
enum DER {
    static let sequence: UInt8 = 0x30
    static let utf8String: UInt8 = 0x0C
    static let null: [UInt8] = [0x05, 0x00]

    /// Tag, definite length, content.
    static func encode(tag: UInt8, _ content: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [tag]
        if content.count < 0x80 {
            out.append(UInt8(content.count))
        } else {
            var length: [UInt8] = []
            var n = content.count
            while n > 0 { length.insert(UInt8(n & 0xFF), at: 0); n >>= 8 }
            out.append(0x80 | UInt8(length.count))
            out += length
        }
        return out + content
    }

    /// A UTF8String.
    static func utf8(_ text: String) -> [UInt8] { encode(tag: utf8String, Array(text.utf8)) }

    /// One TLV.
    struct Element {
        let tag: UInt8
        let content: ArraySlice<UInt8>

        /// The text of a string-typed element (UTF8String, PrintableString, IA5String, VisibleString).
        var text: String? {
            [0x0C, 0x13, 0x16, 0x1A].contains(tag) ? String(decoding: content, as: UTF8.self) : nil
        }
    }

    /// The consecutive TLVs in `bytes`, stopping at the first malformed one.
    static func elements(in bytes: ArraySlice<UInt8>) -> [Element] {
        var result: [Element] = []
        var i = bytes.startIndex
        while i + 1 < bytes.endIndex {
            let tag = bytes[i]
            var length = Int(bytes[i + 1])
            i += 2
            if length & 0x80 != 0 {
                let count = length & 0x7F
                guard count > 0, count <= 4, i + count <= bytes.endIndex else { break }
                length = bytes[i..<(i + count)].reduce(0) { $0 << 8 | Int($1) }
                i += count
            }
            guard length >= 0, i + length <= bytes.endIndex else { break }
            result.append(Element(tag: tag, content: bytes[i..<(i + length)]))
            i += length
        }
        return result
    }
}
