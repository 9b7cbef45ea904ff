/// A date of the proleptic Gregorian calendar (year, month, day; no time, no zone), and the one conversion between
/// dates and days since 1970-01-01 (Howard Hinnant's `days_from_civil` and `civil_from_days`), pure integer
/// arithmetic that is exact for any year an `Int` holds. Everything here that turns a date into days or back — RFC
/// 3339 times (``Timestamp``), local-time waves (``LocalTimePlan``), HTTP dates (``RetryAfter``, the simulator's
/// `date` header) — goes through it, so there is one calendar to get right.
public struct CivilDate: Sendable, Hashable, CustomStringConvertible {
    /// The year (1 BC is 0, 2 BC is -1).
    public var year: Int
    /// The month, 1–12.
    public var month: Int
    /// The day of the month, 1–31.
    public var day: Int

    /// A date as given, unchecked (``isValid`` says whether it exists).
    public init(year: Int, month: Int, day: Int) {
        self.year = year
        self.month = month
        self.day = day
    }

    /// The date `days` days after 1970-01-01 (before it when negative).
    public init(daysSinceEpoch days: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        self.init(year: Int(yoe + era * 400 + (m <= 2 ? 1 : 0)), month: Int(m), day: Int(d))
    }

    /// Days since 1970-01-01 (negative before it). Meaningful for a valid date.
    public var daysSinceEpoch: Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let m = Int64(month)
        let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + Int64(day) - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// True when the date exists: a month 1–12 and a day within it (2026-02-30 does not).
    public var isValid: Bool {
        (1...12).contains(month) && day >= 1 && day <= Self.days(inMonth: month, of: year)
    }

    /// True for a Gregorian leap year: every fourth, but not a century unless it divides by 400 (2000, not 1900).
    public static func isLeapYear(_ year: Int) -> Bool {
        (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
    }

    /// The days of `month` (1–12) in `year`.
    public static func days(inMonth month: Int, of year: Int) -> Int {
        switch month {
        case 2: isLeapYear(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// The next day.
    public var next: CivilDate { CivilDate(daysSinceEpoch: daysSinceEpoch + 1) }

    /// `YYYY-MM-DD` (the year at least four digits).
    public var description: String {
        func pad(_ n: Int, _ width: Int) -> String { String(repeating: "0", count: max(0, width - String(n).count)) + String(n) }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))"
    }
}
