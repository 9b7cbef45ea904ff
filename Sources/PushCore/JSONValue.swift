/// A JSON value that keeps object key order, so encoded payloads are deterministic and their size is
/// exactly what APNs will count.
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    /// An integer (kept apart from doubles so `1` never becomes `1.0`).
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    /// Key/value pairs in order. Keys are unique (the parser rejects duplicates).
    case object([(String, JSONValue)])

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.int(let a), .int(let b)): return a == b
        case (.double(let a), .double(let b)): return a == b
        case (.int(let a), .double(let b)), (.double(let b), .int(let a)): return Double(a) == b
        case (.string(let a), .string(let b)): return a == b
        case (.array(let a), .array(let b)): return a == b
        case (.object(let a), .object(let b)):
            // Objects compare as unordered maps, as JSON defines them.
            guard a.count == b.count else { return false }
            let right = Dictionary(b, uniquingKeysWith: { x, _ in x })
            return a.allSatisfy { key, value in right[key] == value }
        default: return false
        }
    }

    /// The value for `key` when this is an object.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let pairs) = self else { return nil }
        return pairs.first(where: { $0.0 == key })?.1
    }

    /// The object's pairs, or nil when this is not an object.
    public var objectPairs: [(String, JSONValue)]? {
        if case .object(let p) = self { return p }
        return nil
    }

    /// The elements, when this is an array.
    public var arrayValue: [JSONValue]? {
        if case .array(let a) = self { return a }
        return nil
    }

    /// The string, when this is a string.
    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    /// The integer, when this is an integer (or a double with an integral value).
    public var intValue: Int64? {
        switch self {
        case .int(let i): return i
        case .double(let d) where d == d.rounded() && abs(d) < 1e15: return Int64(d)
        default: return nil
        }
    }

    /// The number as a double, when this is a number.
    public var doubleValue: Double? {
        switch self {
        case .int(let i): return Double(i)
        case .double(let d): return d
        default: return nil
        }
    }

    /// Compact UTF-8 JSON, no whitespace.
    public var encoded: [UInt8] {
        var out: [UInt8] = []
        encode(into: &out)
        return out
    }

    /// Compact JSON as a string.
    public var encodedString: String { String(decoding: encoded, as: UTF8.self) }

    /// Appends compact JSON to `out`.
    public func encode(into out: inout [UInt8]) {
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .int(let i): out.append(contentsOf: String(i).utf8)
        case .double(let d):
            if d.isFinite, d == d.rounded(), abs(d) < 1e15 {
                out.append(contentsOf: String(Int64(d)).utf8)
            } else if d.isFinite {
                out.append(contentsOf: "\(d)".utf8)
            } else {
                out.append(contentsOf: "null".utf8)
            }
        case .string(let s): JSONValue.encodeString(s, into: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                item.encode(into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let pairs):
            out.append(UInt8(ascii: "{"))
            for (i, (key, value)) in pairs.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                JSONValue.encodeString(key, into: &out)
                out.append(UInt8(ascii: ":"))
                value.encode(into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// The number of bytes `s` takes as an encoded JSON string, including the quotes.
    public static func encodedLength(of s: String) -> Int {
        var n = 2
        for b in s.utf8 { n += escapedLength(b) }
        return n
    }

    @inline(__always)
    static func escapedLength(_ b: UInt8) -> Int {
        switch b {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), 0x08, 0x0c, 0x0a, 0x0d, 0x09: return 2
        case 0..<0x20: return 6
        default: return 1
        }
    }

    static func encodeString(_ s: String, into out: inout [UInt8]) {
        // No array per call or per escape (a hex table, `[0x5c, …]` literals): every string of every payload comes
        // through here, and a broadcast encodes one per device (issue 57's Web Push profile).
        @inline(__always) func hex(_ n: UInt8) -> UInt8 { n < 10 ? 0x30 + n : 0x57 + n }
        out.append(UInt8(ascii: "\""))
        for b in s.utf8 {
            switch b {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): out.append(0x5c); out.append(b)
            case 0x0a: out.append(0x5c); out.append(UInt8(ascii: "n"))
            case 0x0d: out.append(0x5c); out.append(UInt8(ascii: "r"))
            case 0x09: out.append(0x5c); out.append(UInt8(ascii: "t"))
            case 0x08: out.append(0x5c); out.append(UInt8(ascii: "b"))
            case 0x0c: out.append(0x5c); out.append(UInt8(ascii: "f"))
            case 0..<0x20:
                out.append(0x5c); out.append(UInt8(ascii: "u")); out.append(0x30); out.append(0x30)
                out.append(hex(b >> 4)); out.append(hex(b & 0xf))
            default: out.append(b)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
