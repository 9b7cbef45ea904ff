/// A non-allocating JSON syntax check (RFC 8259), so the hot path can confirm a payload is a JSON object
/// without building a tree; the full parser runs only when a rule needs the payload's content.
enum JSONSyntax {
    /// True when `bytes` is exactly one JSON object (surrounding whitespace allowed).
    static func isObject(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer { buffer in
            var scanner = Scanner(bytes: buffer)
            scanner.skipWhitespace()
            guard scanner.peek == UInt8(ascii: "{"), scanner.value(depth: 0) else { return false }
            scanner.skipWhitespace()
            return scanner.index == buffer.count
        }
    }

    private struct Scanner {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func skipWhitespace() {
            while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x0a || bytes[index] == 0x0d || bytes[index] == 0x09 {
                index += 1
            }
        }

        mutating func literal(_ text: StaticString) -> Bool {
            let n = text.utf8CodeUnitCount
            guard index + n <= bytes.count else { return false }
            for i in 0..<n where bytes[index + i] != text.utf8Start[i] { return false }
            index += n
            return true
        }

        mutating func value(depth: Int) -> Bool {
            guard depth < 64, let c = peek else { return false }
            switch c {
            case UInt8(ascii: "{"):
                index += 1
                skipWhitespace()
                if peek == UInt8(ascii: "}") { index += 1; return true }
                while true {
                    skipWhitespace()
                    guard peek == UInt8(ascii: "\""), string() else { return false }
                    skipWhitespace()
                    guard peek == UInt8(ascii: ":") else { return false }
                    index += 1
                    skipWhitespace()
                    guard value(depth: depth + 1) else { return false }
                    skipWhitespace()
                    guard let next = peek else { return false }
                    index += 1
                    if next == UInt8(ascii: "}") { return true }
                    if next != UInt8(ascii: ",") { return false }
                }
            case UInt8(ascii: "["):
                index += 1
                skipWhitespace()
                if peek == UInt8(ascii: "]") { index += 1; return true }
                while true {
                    skipWhitespace()
                    guard value(depth: depth + 1) else { return false }
                    skipWhitespace()
                    guard let next = peek else { return false }
                    index += 1
                    if next == UInt8(ascii: "]") { return true }
                    if next != UInt8(ascii: ",") { return false }
                }
            case UInt8(ascii: "\""): return string()
            case UInt8(ascii: "t"): return literal("true")
            case UInt8(ascii: "f"): return literal("false")
            case UInt8(ascii: "n"): return literal("null")
            default: return number()
            }
        }

        mutating func string() -> Bool {
            index += 1
            while index < bytes.count {
                let c = bytes[index]
                index += 1
                switch c {
                case UInt8(ascii: "\""): return true
                case UInt8(ascii: "\\"):
                    guard let e = peek else { return false }
                    index += 1
                    switch e {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
                        UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                        continue
                    case UInt8(ascii: "u"):
                        guard index + 4 <= bytes.count else { return false }
                        for i in 0..<4 where !RequestValidator.isHexDigit(bytes[index + i]) { return false }
                        index += 4
                    default: return false
                    }
                case 0..<0x20: return false
                default: continue
                }
            }
            return false
        }

        mutating func number() -> Bool {
            if peek == UInt8(ascii: "-") { index += 1 }
            guard let first = peek, first >= 0x30, first <= 0x39 else { return false }
            index += 1
            if first != 0x30 { digits() }
            if peek == UInt8(ascii: ".") {
                index += 1
                guard digits() > 0 else { return false }
            }
            if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
                index += 1
                if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { index += 1 }
                guard digits() > 0 else { return false }
            }
            return true
        }

        @discardableResult
        mutating func digits() -> Int {
            let start = index
            while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 { index += 1 }
            return index - start
        }
    }
}
