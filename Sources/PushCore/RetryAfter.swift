/// A `Retry-After` header's value (RFC 9110 §10.2.3): delay-seconds, or an HTTP-date in any of the three forms a
/// recipient must accept (§5.6.7: IMF-fixdate, the obsolete RFC 850 form and asctime's). Parsed from the header's
/// bytes without allocating — the transport reads it in libcurl's header callback, once per answer that has one —
/// and turned into a wait only when the answer is judged, against the caller's clock (an HTTP-date is absolute).
/// A value that is neither form is malformed and ignored (nil), as RFC 9110 lets a recipient do.
public enum RetryAfter: Sendable, Equatable {
    /// Delay-seconds, clamped to ``maxSeconds`` (RFC 9110 §1.2: a too-large number is taken as a very long time).
    case seconds(Int64)
    /// An HTTP-date, as seconds since 1970 (UTC).
    case date(epochSeconds: Int64)

    /// The largest delay-seconds kept (about 31 years): any wait this long is "forever" to a sender.
    public static let maxSeconds: Int64 = 1_000_000_000

    /// The wait it asks for, in ms, from `nowMs` (ms since 1970); a date in the past asks for none.
    public func delayMs(nowMs: Int64) -> Int64 {
        switch self {
        case .seconds(let s): return s * 1000
        case .date(let epochSeconds): return max(0, epochSeconds * 1000 - nowMs)
        }
    }

    /// Parses a header value (surrounding whitespace already trimmed or not); nil when it is malformed.
    public static func parse(_ text: String) -> RetryAfter? {
        var text = text
        return text.withUTF8 { parse($0) }
    }

    /// Parses a header value's bytes; nil when it is malformed.
    public static func parse(_ raw: UnsafeBufferPointer<UInt8>) -> RetryAfter? {
        var s = 0, e = raw.count
        while s < e, raw[s] == 0x20 || raw[s] == 0x09 { s += 1 }
        while e > s, raw[e - 1] == 0x20 || raw[e - 1] == 0x09 || raw[e - 1] == 0x0d || raw[e - 1] == 0x0a { e -= 1 }
        guard s < e else { return nil }
        let v = UnsafeBufferPointer(rebasing: raw[s..<e])
        if isDigit(v[0]) {
            var seconds: Int64 = 0
            for byte in v {
                guard isDigit(byte) else { return nil }
                seconds = min(maxSeconds, seconds * 10 + Int64(byte - 0x30))
            }
            return .seconds(seconds)
        }
        return date(v).map { .date(epochSeconds: $0) }
    }

    private static func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }

    private static let dayNames: [StaticString] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    private static let longDayNames: [StaticString] = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
    private static let monthNames: [StaticString] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// An HTTP-date's seconds since 1970, or nil. The day name must be one, but is not checked against the date
    /// (RFC 9110 leaves that to the sender).
    private static func date(_ v: UnsafeBufferPointer<UInt8>) -> Int64? {
        // IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT"
        if v.count == 29, matchesAny(dayNames, v, at: 0), v[3] == 0x2c, v[4] == 0x20, v[7] == 0x20, v[11] == 0x20,
            v[16] == 0x20, v[25] == 0x20, matches("GMT", v, at: 26),
            let day = number(v, 5, 2), let month = month(v, at: 8), let year = number(v, 12, 4),
            let time = timeOfDay(v, at: 17)
        {
            return epochSeconds(year: year, month: month, day: day, time: time)
        }
        // asctime: "Sun Nov  6 08:49:37 1994"
        if v.count == 24, matchesAny(dayNames, v, at: 0), v[3] == 0x20, v[7] == 0x20, v[10] == 0x20, v[19] == 0x20,
            let month = month(v, at: 4), let day = v[8] == 0x20 ? number(v, 9, 1) : number(v, 8, 2),
            let time = timeOfDay(v, at: 11), let year = number(v, 20, 4)
        {
            return epochSeconds(year: year, month: month, day: day, time: time)
        }
        // RFC 850: "Sunday, 06-Nov-94 08:49:37 GMT"
        if let comma = v.firstIndex(of: 0x2c), v.count == comma + 24, matchesAny(longDayNames, v, at: 0, length: comma),
            v[comma + 1] == 0x20, v[comma + 4] == 0x2d, v[comma + 8] == 0x2d, v[comma + 11] == 0x20,
            v[comma + 20] == 0x20, matches("GMT", v, at: comma + 21),
            let day = number(v, comma + 2, 2), let month = month(v, at: comma + 5), let yy = number(v, comma + 9, 2),
            let time = timeOfDay(v, at: comma + 12)
        {
            // A two-digit year: 00–69 is 20xx, 70–99 is 19xx (a date that far in the past asks for no wait anyway).
            return epochSeconds(year: yy < 70 ? 2000 + yy : 1900 + yy, month: month, day: day, time: time)
        }
        return nil
    }

    private static func epochSeconds(year: Int, month: Int, day: Int, time: Int64) -> Int64? {
        let date = CivilDate(year: year, month: month, day: day)
        // 31 Feb and the like are not dates.
        guard date.isValid else { return nil }
        return date.daysSinceEpoch * 86_400 + time
    }

    /// "HH:MM:SS" at `i`, as seconds into the day.
    private static func timeOfDay(_ v: UnsafeBufferPointer<UInt8>, at i: Int) -> Int64? {
        guard v[i + 2] == 0x3a, v[i + 5] == 0x3a, let h = number(v, i, 2), let m = number(v, i + 3, 2),
            let s = number(v, i + 6, 2), h < 24, m < 60, s < 61
        else { return nil }
        return Int64(h * 3600 + m * 60 + min(s, 59))
    }

    private static func number(_ v: UnsafeBufferPointer<UInt8>, _ i: Int, _ n: Int) -> Int? {
        var value = 0
        for k in i..<(i + n) {
            guard isDigit(v[k]) else { return nil }
            value = value * 10 + Int(v[k] - 0x30)
        }
        return value
    }

    private static func month(_ v: UnsafeBufferPointer<UInt8>, at i: Int) -> Int? {
        monthNames.firstIndex { matches($0, v, at: i) }.map { $0 + 1 }
    }

    /// True when one of `names` is at `i` (and, with `length`, is exactly that long). Case-sensitive, as RFC 9110.
    private static func matchesAny(_ names: [StaticString], _ v: UnsafeBufferPointer<UInt8>, at i: Int, length: Int? = nil) -> Bool {
        names.contains { (length == nil || $0.utf8CodeUnitCount == length) && matches($0, v, at: i) }
    }

    private static func matches(_ name: StaticString, _ v: UnsafeBufferPointer<UInt8>, at i: Int) -> Bool {
        let n = name.utf8CodeUnitCount
        guard i >= 0, i + n <= v.count else { return false }
        let p = name.utf8Start
        for k in 0..<n where v[i + k] != p[k] { return false }
        return true
    }
}
