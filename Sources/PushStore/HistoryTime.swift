import Foundation

/// The times of the delivery history: `--since` and `?since=` read RFC 3339 (`2026-11-24T08:00:00Z`,
/// fractional seconds and offsets allowed) or seconds since 1970; items print RFC 3339 in UTC with milliseconds.
public enum HistoryTime {
    /// `text` as ms since 1970, or nil when it is neither RFC 3339 nor a whole number of seconds since 1970.
    public static func parse(_ text: String) -> Int64? {
        if !text.isEmpty, text.count <= 12, text.allSatisfy(\.isASCII), text.allSatisfy(\.isNumber), let seconds = Int64(text) {
            return seconds * 1000
        }
        guard text.count <= 40 else { return nil }
        for options: ISO8601DateFormatter.Options in [[.withInternetDateTime, .withFractionalSeconds], [.withInternetDateTime]] {
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = options
            if let date = formatter.date(from: text) { return Int64((date.timeIntervalSince1970 * 1000).rounded()) }
        }
        return nil
    }

    /// `ms` (since 1970) as RFC 3339 in UTC with milliseconds: `2026-11-24T08:00:00.125Z`.
    public static func format(_ ms: Int64) -> String {
        let seconds = ms >= 0 ? ms / 1000 : (ms - 999) / 1000
        let millis = ms - seconds * 1000
        var t = time_t(seconds)
        var parts = tm()
        gmtime_r(&t, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2)).\(pad(Int32(millis), 3))Z"
    }
}
