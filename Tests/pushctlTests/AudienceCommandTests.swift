import Foundation
import PushCore
import PushStore
import Testing
import TestSupport

/// `tokens import --format jsonl`, `--user`/`--where` on send, broadcast and `tokens count`, and `broadcast
/// --local-time`, run as a user would: real processes, a real simulator process, a real database file.
@Suite(.timeLimit(.minutes(2))) struct AudienceCommandTests {
    typealias World = BroadcastCommandTests.World

    static func token(_ i: Int) -> String { String(format: "ee%062x", i) }

    /// Six devices with fields: users a (0, 1) and b (2, 3), versions 2.10/2.2/2.3.1, locales de/en.
    static let jsonl = (0..<6).map { i in
        #"{"token":"\#(token(i))","user":"\#(i < 2 ? "a" : i < 4 ? "b" : "c")","locale":"\#(i % 2 == 0 ? "de-DE" : "en-US")","appVersion":"\#(["2.10", "2.2", "2.3.1"][i % 3])","timeZone":"Europe/Berlin","tags":{"n":\#(i)}}"#
    }.joined(separator: "\n")

    @Test func anImportWithFieldsFeedsUsersAndSegments() async throws {
        var w = try await World.make(tokens: 0)
        defer { w.stop() }
        let imported = try await CLI.run(["tokens", "import", "--config", w.config, "--app", "example", "--format", "jsonl", "-"], stdin: Self.jsonl + "\n")
        #expect(imported.status == 0 && imported.stdout == "imported 6 tokens in 1 batches\n", "\(imported.stderr)")
        let count = try await CLI.run(["tokens", "count", "--config", w.config, "--app", "example", "--where", "appVersion>=2.3", "--where", "locale=de*"])
        // appVersion >= 2.3 (2.10 and 2.3.1 in version order): 0, 2, 3, 5; of those in German: 0 and 2.
        #expect(count.stdout == "2\n", "\(count.stderr)")
        let sent = try await CLI.run(["send", "--config", w.config, "--app", "example", "--user", "b", "--alert", "Hi b", "--json"])
        #expect(sent.status == 0, "\(sent.stderr)")
        #expect(Set(try w.received()) == [Self.token(2), Self.token(3)])
        // A bad clause: exit 2, one line naming it, nothing sent.
        let bad = try await CLI.run(["send", "--config", w.config, "--app", "example", "--where", "appVersion>=2.3", "--where", "locale ~ de", "--alert", "x"])
        #expect(bad.status == 2 && bad.stderr.contains("--where[1] 'locale ~ de'"), "\(bad.stderr)")
        #expect(bad.stderr.split(separator: "\n").count == 1)
        #expect(try w.received().count == 2)
        // A broadcast to the segment.
        let segment = try await CLI.run(["broadcast", "--config", w.config, "--app", "example", "--id", "seg", "--where", "appVersion >= 2.3",
                                        "--where", "locale = de*", "--alert", "Neu", "--json"])
        #expect(segment.status == 0, "\(segment.stderr)")
        #expect(try w.received().count == 4)
        #expect(Set(try w.received().suffix(2)) == [Self.token(0), Self.token(2)])
    }

    /// `tokens import --format jsonl` takes every name of the system's tz database and stores the canonical zone: the
    /// old name Asia/Calcutta counts as Asia/Kolkata.
    @Test func anImportTakesTheTzDatabasesNamesAndStoresTheCanonicalZone() async throws {
        var w = try await World.make(tokens: 0, startSimulator: false)
        defer { w.stop() }
        let zones = ["Asia/Kolkata", "Asia/Calcutta", "Etc/UTC", "UTC"]
        let lines = zones.enumerated().map { i, zone in #"{"token":"\#(Self.token(20 + i))","timeZone":"\#(zone)"}"# }.joined(separator: "\n")
        let r = try await CLI.run(["tokens", "import", "--config", w.config, "--app", "example", "--format", "jsonl", "-"], stdin: lines + "\n")
        #expect(r.status == 0, "\(r.stderr)")
        for (clause, expected) in [("timeZone = Asia/Kolkata", "2\n"), ("timeZone = Etc/UTC", "2\n"), ("timeZone = Asia/Calcutta", "0\n")] {
            let count = try await CLI.run(["tokens", "count", "--config", w.config, "--app", "example", "--where", clause])
            #expect(count.stdout == expected, "\(clause): \(count.stdout) \(count.stderr)")
        }
    }

    @Test func aBadImportLineNamesItsLineAndFieldAndWritesNothingOfItsBatch() async throws {
        var w = try await World.make(tokens: 0, startSimulator: false)
        defer { w.stop() }
        let lines = Self.jsonl + "\n" + #"{"token":"\#(Self.token(9))","timeZone":"Mars/Base"}"# + "\n"
        let r = try await CLI.run(["tokens", "import", "--config", w.config, "--app", "example", "--format", "jsonl", "-"], stdin: lines)
        #expect(r.status == 2)
        #expect(r.stderr.contains("line 7: timeZone must be an IANA time zone name"), "\(r.stderr)")
        let count = try await CLI.run(["tokens", "count", "--config", w.config, "--app", "example"])
        #expect(count.stdout == "0\n")
    }

    @Test func aLocalTimeBroadcastIsOneJobOfWavesThatCanBeShownAndCancelled() async throws {
        var w = try await World.make(tokens: 0, startSimulator: false)
        defer { w.stop() }
        _ = try await CLI.run(["tokens", "import", "--config", w.config, "--app", "example", "--format", "jsonl", "-"], stdin: Self.jsonl)
        let stored = try await CLI.run(["broadcast", "--config", w.config, "--app", "example", "--id", "xmas", "--alert", "Merry",
                                       "--local-time", "09:00", "--on", "2099-12-24"])
        #expect(stored.status == 0 && stored.stdout == "xmas\n", "\(stored.stderr)")
        #expect(stored.stderr.contains("2099-12-23T19:00:00Z"), "\(stored.stderr)")  // UTC+14 first
        let again = try await CLI.run(["broadcast", "--config", w.config, "--app", "example", "--id", "xmas", "--alert", "Merry",
                                      "--local-time", "09:00", "--on", "2099-12-24"])
        #expect(again.status == 0 && again.stderr.contains("already stored"))
        let other = try await CLI.run(["broadcast", "--config", w.config, "--app", "example", "--id", "xmas", "--alert", "Other",
                                      "--local-time", "09:00", "--on", "2099-12-24"])
        #expect(other.status == 2)
        let shown = try await CLI.run(["jobs", "show", "xmas", "--config", w.config, "--app", "example"])
        let job = try JSONValue(parsing: shown.stdout)
        #expect(job["state"]?.stringValue == "pending" && job["localTime"]?.stringValue == "09:00 on 2099-12-24")
        let waves = try #require(job["waves"]?.arrayValue)
        #expect(waves.count > 30)
        #expect(waves.contains { $0["utcOffset"]?.stringValue == "UTC+01:00" && $0["at"]?.stringValue == "2099-12-24T08:00:00Z" })
        let cancelled = try await CLI.run(["jobs", "cancel", "xmas", "--config", w.config, "--app", "example"])
        #expect(cancelled.status == 0 && cancelled.stdout.hasPrefix("job xmas cancelled"), "\(cancelled.stderr)")
        let after = try JSONValue(parsing: try await CLI.run(["jobs", "show", "xmas", "--config", w.config, "--app", "example"]).stdout)
        #expect(after["state"]?.stringValue == "cancelled")
        for bad in [["--local-time", "9am"], ["--local-time", "09:00", "--at", "2099-01-01T00:00:00Z"], ["--on", "2099-12-24"],
                    ["--local-time", "09:00", "--on", "2099-02-30"]] {
            let r = try await CLI.run(["broadcast", "--config", w.config, "--app", "example", "--alert", "x"] + bad)
            #expect(r.status == 2, "\(bad): \(r.stderr)")
        }
    }
}
