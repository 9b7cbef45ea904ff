import PushCore
import Testing

struct RetryAfterTests {
    /// 1994-11-06 08:49:37 UTC, RFC 9110's example date.
    static let example: Int64 = 784_111_777

    @Test func delaySecondsParse() {
        #expect(RetryAfter.parse("120") == .seconds(120))
        #expect(RetryAfter.parse(" 0 \r\n") == .seconds(0))
        #expect(RetryAfter.parse("99999999999999999999999") == .seconds(RetryAfter.maxSeconds))
        #expect(RetryAfter.seconds(3).delayMs(nowMs: 123) == 3000)
    }

    @Test func everyHTTPDateFormParsesToTheSameInstant() {
        #expect(RetryAfter.parse("Sun, 06 Nov 1994 08:49:37 GMT") == .date(epochSeconds: Self.example))
        #expect(RetryAfter.parse("Sunday, 06-Nov-94 08:49:37 GMT") == .date(epochSeconds: Self.example))
        #expect(RetryAfter.parse("Sun Nov  6 08:49:37 1994") == .date(epochSeconds: Self.example))
        #expect(RetryAfter.parse("Fri, 27 Nov 2026 20:00:05 GMT") == .date(epochSeconds: 1_795_809_605))
        #expect(RetryAfter.parse("Thu, 29 Feb 2024 00:00:00 GMT") == .date(epochSeconds: 1_709_164_800))
    }

    @Test func aDateIsAWaitFromNowAndAPastDateNone() {
        let date = RetryAfter.date(epochSeconds: Self.example)
        #expect(date.delayMs(nowMs: Self.example * 1000 - 2500) == 2500)
        #expect(date.delayMs(nowMs: Self.example * 1000 + 1) == 0)
    }

    @Test func malformedValuesAreIgnored() {
        for bad in [
            "", " ", "-1", "1.5", "12s", "soon", "0x10",
            "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 6 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 94 08:49:37 GMT",
            "Sun, 31 Feb 1994 08:49:37 GMT", "Sun, 06 Foo 1994 08:49:37 GMT", "Sun, 06 Nov 1994 24:00:00 GMT",
            "sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-1994 08:49:37 GMT", "Sun Nov 6 08:49:37 1994",
            "Xyz, 06 Nov 1994 08:49:37 GMT",
        ] {
            #expect(RetryAfter.parse(bad) == nil, "\(bad)")
        }
    }
}
