/// Points in time as the CLI and the HTTP API take and show them: RFC 3339 (`2026-11-24T08:00:00Z`,
/// `2026-11-24T09:00:00.250+01:00`) or epoch seconds (`1795507200`), held as milliseconds since 1970 (UTC).
/// Pure arithmetic (no Foundation, no time-zone database; dates are ``CivilDate``): an offset is always explicit in
/// RFC 3339.
public enum Timestamp {
    /// A text that is neither RFC 3339 nor epoch seconds.
    public struct ParseError: Error, Equatable, CustomStringConvertible {
        /// What is wrong, fit for a one-line CLI error or a 400 message.
        public let message: String
        /// The message.
        public var description: String { message }
    }

    /// Epoch seconds the CLI and the HTTP API take (`at`, `expiration`, a Live Activity's `timestamp`, `stale-date`
    /// and `dismissal-date`): at most 11 digits, as docs/openapi.yaml says (`maximum: 99999999999`, the year 5138).
    /// One bound for all of them, so a number the description refuses is refused everywhere, and `at` in
    /// milliseconds never overflows.
    public static let epochSeconds: ClosedRange<Int64> = 0...99_999_999_999

    /// Milliseconds since 1970 from RFC 3339 (a `Z` or `±HH:MM` offset is required; `T`, `t` or, with `allowSpace`,
    /// a space between date and time; fraction digits kept to the millisecond) or from epoch seconds (digits only,
    /// at most 11: ``epochSeconds``). `allowSpace: false` is RFC 3339's `date-time` exactly, as an HTTP parameter
    /// described with `format: date-time` takes it (the delivery history's `since`).
    public static func parse(_ text: String, allowSpace: Bool = true) throws(ParseError) -> Int64 {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty else { throw ParseError(message: "empty time; give RFC 3339 (2026-11-24T08:00:00Z) or epoch seconds") }
        if bytes.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
            guard bytes.count <= 11, let seconds = Int64(text) else { throw ParseError(message: "epoch seconds out of range: \(text)") }
            return seconds * 1000
        }
        return try parseRFC3339(bytes, text: text, allowSpace: allowSpace)
    }

    /// Milliseconds since 1970 from RFC 3339's `date-time` exactly (`T` or `t` between date and time, a `Z` or
    /// `±HH:MM` offset, any number of fraction digits kept to the millisecond): what the HTTP API's `"at"` string
    /// takes (epoch seconds come as a JSON number there).
    public static func parseRFC3339(_ text: String) throws(ParseError) -> Int64 {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty else { throw ParseError(message: "empty time; give RFC 3339, e.g. 2026-11-24T08:00:00Z") }
        return try parseRFC3339(bytes, text: text, allowSpace: false)
    }

    /// `ms` as RFC 3339 in UTC, with milliseconds only when they are not zero (`2026-11-24T08:00:00Z`,
    /// `2026-11-24T08:00:00.250Z`), or always with `milliseconds` (fixed width: the delivery history's times).
    public static func rfc3339(ms: Int64, milliseconds: Bool = false) -> String {
        let (seconds, milli) = floorDivide(ms, 1000)
        let (days, secondOfDay) = floorDivide(seconds, 86_400)
        let hour = secondOfDay / 3600, minute = secondOfDay % 3600 / 60, second = secondOfDay % 60
        var out = CivilDate(daysSinceEpoch: days).description
        out += "T" + pad(hour, 2) + ":" + pad(minute, 2) + ":" + pad(second, 2)
        if milli != 0 || milliseconds { out += "." + pad(milli, 3) }
        return out + "Z"
    }

    private static func parseRFC3339(_ b: [UInt8], text: String, allowSpace: Bool) throws(ParseError) -> Int64 {
        let bad = ParseError(message: "'\(text)' is not RFC 3339 (2026-11-24T08:00:00Z, with Z or an offset like +01:00) or epoch seconds")
        var i = 0
        func number(_ count: Int) throws(ParseError) -> Int64 {
            guard i + count <= b.count else { throw bad }
            var value: Int64 = 0
            for byte in b[i..<(i + count)] {
                guard byte >= 0x30 && byte <= 0x39 else { throw bad }
                value = value * 10 + Int64(byte - 0x30)
            }
            i += count
            return value
        }
        func expect(_ chars: Set<UInt8>) throws(ParseError) {
            guard i < b.count, chars.contains(b[i]) else { throw bad }
            i += 1
        }
        let year = try number(4)
        try expect([0x2D])
        let month = try number(2)
        try expect([0x2D])
        let day = try number(2)
        try expect(allowSpace ? [0x54, 0x74, 0x20] : [0x54, 0x74])  // T t (space)
        let hour = try number(2)
        try expect([0x3A])
        let minute = try number(2)
        try expect([0x3A])
        let second = try number(2)
        var milli: Int64 = 0
        if i < b.count, b[i] == 0x2E {
            i += 1
            var digits = 0
            while i < b.count, b[i] >= 0x30 && b[i] <= 0x39 {
                if digits < 3 { milli = milli * 10 + Int64(b[i] - 0x30) }
                digits += 1
                i += 1
            }
            guard digits >= 1 else { throw bad }
            if digits < 3 { for _ in digits..<3 { milli *= 10 } }
        }
        var offsetSeconds: Int64 = 0
        guard i < b.count else { throw ParseError(message: "'\(text)' has no time zone: add Z (UTC) or an offset like +01:00") }
        if b[i] == 0x5A || b[i] == 0x7A {  // Z z
            i += 1
        } else if b[i] == 0x2B || b[i] == 0x2D {  // + -
            let sign: Int64 = b[i] == 0x2D ? -1 : 1
            i += 1
            let oh = try number(2)
            try expect([0x3A])
            let om = try number(2)
            guard oh < 24, om < 60 else { throw bad }
            offsetSeconds = sign * (oh * 3600 + om * 60)
        } else {
            throw bad
        }
        guard i == b.count else { throw bad }
        let date = CivilDate(year: Int(year), month: Int(month), day: Int(day))
        guard date.isValid, hour < 24, minute < 60, second < 61
        else { throw ParseError(message: "'\(text)' is not a valid date and time") }
        let days = date.daysSinceEpoch
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + min(second, 59) - offsetSeconds
        return seconds * 1000 + milli
    }

    private static func floorDivide(_ a: Int64, _ b: Int64) -> (Int64, Int64) {
        let q = a / b, r = a % b
        return r < 0 ? (q - 1, r + b) : (q, r)
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}
