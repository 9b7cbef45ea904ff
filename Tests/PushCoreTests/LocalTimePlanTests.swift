import Foundation
import PushCore
import Testing

/// `LocalTimePlan`: when each zone's wall-clock time falls, across both daylight-saving changes, and how zones
/// group into waves.
@Suite struct LocalTimePlanTests {
    func ms(_ text: String) throws -> Int64 { try Timestamp.parse(text) }
    func at(_ date: String, _ time: String, _ zone: String) throws -> Int64 {
        let spec = try LocalTimeSpec.parse(time: time, date: date)
        return LocalTimePlan.instantMs(spec, in: try #require(TimeZone(identifier: zone)), createdMs: 0)
    }

    @Test func aTimeTheSpringChangeSkipsIsSentAtTheFirstValidMinuteAfterIt() throws {
        // Europe/Berlin jumps from 02:00 CET to 03:00 CEST on 2026-03-29 (01:00Z).
        #expect(try at("2026-03-29", "02:30", "Europe/Berlin") == ms("2026-03-29T01:00:00Z"))
        #expect(try at("2026-03-29", "02:00", "Europe/Berlin") == ms("2026-03-29T01:00:00Z"))
        #expect(try at("2026-03-29", "03:00", "Europe/Berlin") == ms("2026-03-29T01:00:00Z"))
        #expect(try at("2026-03-29", "01:59", "Europe/Berlin") == ms("2026-03-29T00:59:00Z"))
        // America/New_York jumps from 02:00 EST to 03:00 EDT on 2026-03-08 (07:00Z).
        #expect(try at("2026-03-08", "02:30", "America/New_York") == ms("2026-03-08T07:00:00Z"))
    }

    @Test func aTimeTheAutumnChangeRepeatsIsSentAtItsFirstOccurrence() throws {
        // Europe/Berlin goes back from 03:00 CEST to 02:00 CET on 2026-10-25 (01:00Z): 02:30 happens at 00:30Z and 01:30Z.
        #expect(try at("2026-10-25", "02:30", "Europe/Berlin") == ms("2026-10-25T00:30:00Z"))
        #expect(try at("2026-10-25", "03:00", "Europe/Berlin") == ms("2026-10-25T02:00:00Z"))
        // America/New_York: 01:30 happens at 05:30Z (EDT) and 06:30Z (EST) on 2026-11-01.
        #expect(try at("2026-11-01", "01:30", "America/New_York") == ms("2026-11-01T05:30:00Z"))
        #expect(try at("2026-11-01", "09:00", "America/New_York") == ms("2026-11-01T14:00:00Z"))
        #expect(try at("2026-10-31", "09:00", "America/New_York") == ms("2026-10-31T13:00:00Z"))
    }

    @Test func zonesWithTheSameInstantShareAWaveInTimeOrder() throws {
        let spec = try LocalTimeSpec.parse(time: "09:00", date: "2026-12-24")
        let zones = ["Asia/Tokyo", "Europe/Berlin", "Europe/Paris", "America/New_York", "UTC"]
        let waves = LocalTimePlan.waves(spec, createdMs: try ms("2026-12-01T00:00:00Z"), defaultZone: "UTC", zones: zones)
        #expect(waves.map(\.atMs) == [
            try ms("2026-12-24T00:00:00Z"), try ms("2026-12-24T08:00:00Z"), try ms("2026-12-24T09:00:00Z"), try ms("2026-12-24T14:00:00Z"),
        ])
        #expect(waves.map(\.zones) == [["Asia/Tokyo"], ["Europe/Berlin", "Europe/Paris"], ["UTC"], ["America/New_York"]])
        #expect(waves.map(\.offsetLabel) == ["UTC+09:00", "UTC+01:00", "UTC+00:00", "UTC-05:00"])
        #expect(waves.map(\.includesUnzoned) == [false, false, true, false])
        #expect(waves.allSatisfy { !$0.past })
    }

    @Test func wavesWhoseTimeHasPassedGoAtOnceOrAreSkipped() throws {
        let zones = ["Asia/Tokyo", "Europe/Berlin", "America/New_York", "UTC"]
        let created = try ms("2026-12-24T08:30:00Z")
        let now = LocalTimePlan.waves(try LocalTimeSpec.parse(time: "09:00", date: "2026-12-24"), createdMs: created, defaultZone: "UTC", zones: zones)
        #expect(now.map(\.atMs) == [created, created, try ms("2026-12-24T09:00:00Z"), try ms("2026-12-24T14:00:00Z")])
        #expect(now.map(\.past) == [true, true, false, false])
        let skipped = LocalTimePlan.waves(
            try LocalTimeSpec.parse(time: "09:00", date: "2026-12-24", skipPast: true), createdMs: created, defaultZone: "UTC", zones: zones)
        #expect(skipped.map(\.zones) == [["UTC"], ["America/New_York"]])
    }

    @Test func withoutADateEachZoneGetsItsNextOccurrenceAfterCreation() throws {
        // 2026-12-01T08:00Z is 09:00 in Berlin already: Berlin's next 09:00 is tomorrow; Tokyo's (17:00 now) too.
        let created = try ms("2026-12-01T08:00:00Z")
        let spec = try LocalTimeSpec.parse(time: "09:00", date: nil)
        let waves = LocalTimePlan.waves(spec, createdMs: created, defaultZone: "Europe/Berlin", zones: ["Asia/Tokyo", "Europe/Berlin", "America/New_York", "UTC"])
        #expect(waves.map(\.atMs) == [
            try ms("2026-12-01T09:00:00Z"), try ms("2026-12-01T14:00:00Z"), try ms("2026-12-02T00:00:00Z"), try ms("2026-12-02T08:00:00Z"),
        ])
        #expect(waves.map(\.zones) == [["UTC"], ["America/New_York"], ["Asia/Tokyo"], ["Europe/Berlin"]])
        #expect(waves.last?.includesUnzoned == true)  // the default zone's wave takes devices without a zone
        #expect(waves.allSatisfy { $0.atMs > created && !$0.past })
    }

    @Test func everyZoneOfTheDatabaseIsInExactlyOneWave() throws {
        let spec = try LocalTimeSpec.parse(time: "09:00", date: "2026-07-01")
        let all = TimeZoneNames.system.allNames
        let waves = LocalTimePlan.waves(spec, createdMs: try ms("2026-06-01T00:00:00Z"), defaultZone: "UTC", zones: all.sorted())
        let listed = waves.flatMap(\.zones)
        #expect(Set(listed).count == listed.count)
        #expect(Set(listed) == all)
        #expect(waves.count >= 30 && waves.count <= 45)
        #expect(waves.filter(\.includesUnzoned).count == 1)
    }

    @Test func badTimesAndDatesAreRefused() {
        for (time, date) in [("9:00", nil), ("24:00", nil), ("09:60", nil), ("0900", nil), ("09:00", "2026-02-30"), ("09:00", "2026-2-3"), ("09:00", "tomorrow")] as [(String, String?)] {
            #expect(throws: FieldError.self) { try LocalTimeSpec.parse(time: time, date: date) }
        }
        #expect((try? LocalTimeSpec.parse(time: "09:05", date: "2028-02-29"))?.description == "09:05 on 2028-02-29")
    }
}
