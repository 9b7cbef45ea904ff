import PushCore
import Testing

/// `Timestamp`: the times `--at`, `"at"` and `--since` take, and how they are shown.
@Suite struct TimestampTests {
    @Test(arguments: [
        ("1970-01-01T00:00:00Z", Int64(0)),
        ("2026-12-01T08:00:00Z", 1_796_112_000_000),
        ("2026-12-01t08:00:00z", 1_796_112_000_000),
        ("2026-12-01 08:00:00Z", 1_796_112_000_000),
        ("2026-12-01T09:00:00+01:00", 1_796_112_000_000),
        ("2026-12-01T02:30:00-05:30", 1_796_112_000_000),
        ("2026-12-01T08:00:00.25Z", 1_796_112_000_250),
        ("2026-12-01T08:00:00.123456789Z", 1_796_112_000_123),
        ("2024-02-29T00:00:00Z", 1_709_164_800_000),
        ("1796112000", 1_796_112_000_000),
        ("0", 0),
    ]) func parsesRFC3339AndEpochSeconds(_ text: String, _ ms: Int64) throws {
        #expect(try Timestamp.parse(text) == ms)
    }

    @Test(arguments: [
        "", "tomorrow", "2026-12-01", "2026-12-01T08:00:00", "2026-12-01T08:00Z", "2026-12-01T08:00:00+0100",
        "2026-13-01T08:00:00Z", "2026-02-29T08:00:00Z", "2026-12-32T08:00:00Z", "2026-12-01T24:00:00Z",
        "2026-12-01T08:00:00.Z", "2026-12-01T08:00:00Zjunk", "-5", "1.5", "123456789012345",
    ]) func rejectsAnythingElseWithAMessage(_ text: String) {
        #expect(throws: Timestamp.ParseError.self) { try Timestamp.parse(text) }
        do { _ = try Timestamp.parse(text) } catch { #expect(!error.message.isEmpty) }
    }

    @Test func theAPIFormIsRFC3339sDateTimeExactly() throws {
        #expect(try Timestamp.parseRFC3339("2026-12-01T08:00:00.1234567890123Z") == 1_796_112_000_123)
        #expect(try Timestamp.parseRFC3339("2026-12-01t09:00:00+01:00") == 1_796_112_000_000)
        #expect(throws: Timestamp.ParseError.self) { try Timestamp.parseRFC3339("1796112000") }
        #expect(throws: Timestamp.ParseError.self) { try Timestamp.parseRFC3339("2026-12-01 08:00:00Z") }
    }

    /// The delivery history's `since` (`format: date-time` or 1-11 digits in docs/openapi.yaml): epoch seconds or
    /// RFC 3339's `date-time` exactly, through the same parser as `--at`.
    @Test func theQueryFormTakesEpochSecondsAndDateTimeButNoSpace() throws {
        #expect(try Timestamp.parse("1796112000", allowSpace: false) == 1_796_112_000_000)
        #expect(try Timestamp.parse("2026-12-01T09:00:00+01:00", allowSpace: false) == 1_796_112_000_000)
        #expect(throws: Timestamp.ParseError.self) { try Timestamp.parse("2026-12-01 08:00:00Z", allowSpace: false) }
        #expect(throws: Timestamp.ParseError.self) { try Timestamp.parse("123456789012", allowSpace: false) }
    }

    @Test func aMissingZoneIsNamedInTheError() {
        #expect { try Timestamp.parse("2026-12-01T08:00:00") } throws: {
            ($0 as? Timestamp.ParseError)?.message.contains("no time zone") == true
        }
    }

    @Test func formatsUTCWithMillisecondsOnlyWhenThereAreAny() throws {
        #expect(Timestamp.rfc3339(ms: 0) == "1970-01-01T00:00:00Z")
        #expect(Timestamp.rfc3339(ms: 1_796_112_000_000) == "2026-12-01T08:00:00Z")
        #expect(Timestamp.rfc3339(ms: 1_796_112_000_250) == "2026-12-01T08:00:00.250Z")
        #expect(Timestamp.rfc3339(ms: -1) == "1969-12-31T23:59:59.999Z")
        // Round trip over leap days and century rules.
        for ms in stride(from: Int64(-2_208_988_800_000), to: 4_102_444_800_000, by: 86_400_000 * 37 + 3_723_001) {
            #expect(try Timestamp.parse(Timestamp.rfc3339(ms: ms)) == ms)
        }
    }
}
