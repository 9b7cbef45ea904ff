import PushCore
import Testing

/// `CivilDate`, the one conversion between dates and days since 1970 that RFC 3339 times, local-time waves and HTTP
/// dates share.
@Suite struct CivilDateTests {
    @Test(arguments: [
        (1970, 1, 1, Int64(0)), (1969, 12, 31, -1), (2000, 2, 29, 11_016), (2000, 3, 1, 11_017), (1900, 2, 28, -25_509),
        (1900, 3, 1, -25_508), (2024, 2, 29, 19_782), (2026, 12, 2, 20_789), (1, 1, 1, -719_162), (9999, 12, 31, 2_932_896),
        (5138, 11, 16, 1_157_407),  // the last day of Timestamp.epochSeconds
    ])
    func knownDatesAreTheirDaysSinceTheEpochBothWays(year: Int, month: Int, day: Int, days: Int64) {
        let date = CivilDate(year: year, month: month, day: day)
        #expect(date.isValid)
        #expect(date.daysSinceEpoch == days)
        #expect(CivilDate(daysSinceEpoch: days) == date)
    }

    @Test func leapYearsAreEveryFourthButCenturiesOnlyByFourHundred() {
        #expect(CivilDate.isLeapYear(2024) && CivilDate.isLeapYear(2000) && CivilDate.isLeapYear(1600))
        #expect(!CivilDate.isLeapYear(1900) && !CivilDate.isLeapYear(2100) && !CivilDate.isLeapYear(2026))
        #expect(CivilDate(year: 2000, month: 2, day: 29).isValid && CivilDate(year: 2024, month: 2, day: 29).isValid)
        #expect(!CivilDate(year: 1900, month: 2, day: 29).isValid && !CivilDate(year: 2026, month: 2, day: 29).isValid)
        #expect(CivilDate.days(inMonth: 2, of: 2000) == 29 && CivilDate.days(inMonth: 2, of: 1900) == 28)
        // 1900 has no 29 February: the day after the 28th is 1 March.
        #expect(CivilDate(year: 1900, month: 2, day: 28).next == CivilDate(year: 1900, month: 3, day: 1))
        #expect(CivilDate(year: 2000, month: 2, day: 28).next == CivilDate(year: 2000, month: 2, day: 29))
    }

    @Test(arguments: [(2026, 2, 30), (2026, 4, 31), (2026, 13, 1), (2026, 0, 1), (2026, 1, 0), (2026, 1, 32)])
    func daysThatDoNotExistAreNotValid(year: Int, month: Int, day: Int) {
        #expect(!CivilDate(year: year, month: month, day: day).isValid)
    }

    /// Against an independent count: a naive walk through the calendar, day by day, from 1600 to 2400 (two full
    /// 400-year cycles of the Gregorian calendar, every leap rule in them) — each date is its day number and back.
    @Test func everyDayFrom1600To2400RoundTripsAndFollowsTheCalendar() {
        var date = CivilDate(year: 1600, month: 1, day: 1)
        var days = date.daysSinceEpoch
        #expect(days == -135_140)
        var mismatches = 0
        while date.year <= 2400 {
            if CivilDate(daysSinceEpoch: days) != date || date.daysSinceEpoch != days { mismatches += 1 }
            if date.day < CivilDate.days(inMonth: date.month, of: date.year) {
                date.day += 1
            } else if date.month < 12 {
                date = CivilDate(year: date.year, month: date.month + 1, day: 1)
            } else {
                date = CivilDate(year: date.year + 1, month: 1, day: 1)
            }
            days += 1
        }
        #expect(mismatches == 0)
        #expect(days == CivilDate(year: 2401, month: 1, day: 1).daysSinceEpoch)
    }

    @Test(arguments: [Int64(-100_000_000), -1_000_000, -719_469, 3_000_000, 100_000_000, 1_000_000_000])
    func farDatesRoundTrip(days: Int64) {
        let date = CivilDate(daysSinceEpoch: days)
        #expect(date.isValid)
        #expect(date.daysSinceEpoch == days)
        #expect(date.next.daysSinceEpoch == days + 1)
    }

    @Test func theDescriptionIsYYYYMMDD() {
        #expect(CivilDate(year: 2026, month: 12, day: 2).description == "2026-12-02")
        #expect(CivilDate(year: 812, month: 3, day: 9).description == "0812-03-09")
        #expect(CivilDate(year: 12026, month: 1, day: 1).description == "12026-01-01")
    }
}
