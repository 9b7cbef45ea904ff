import Foundation

extension Data {
    /// Lowercase hex — how APNs tokens travel and are stored. (Not `"\(data)"` or `%@`: on iOS 13+ that prints
    /// `{length = 32, bytes = 0x…}`, the bug that broke many hand-written registrations.)
    var lowercaseHex: String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(count * 2)
        for byte in self {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Bytes from hex digits (either case); nil for anything else or an odd count.
    init?(hex: String) {
        var bytes = [UInt8]()
        var high: UInt8?
        for c in hex.utf8 {
            let v: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): v = c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): v = c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): v = c - UInt8(ascii: "A") + 10
            default: return nil
            }
            if let h = high { bytes.append(h << 4 | v); high = nil } else { high = v }
        }
        guard high == nil else { return nil }
        self.init(bytes)
    }
}
