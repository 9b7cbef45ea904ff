import Foundation
import PushCore
import Testing

/// `InstallationUpdate` and `InstallationRules`: what registration accepts for each installation field, and the
/// keep / clear / carry-over rule.
@Suite struct InstallationTests {
    @Test func aFieldLeftOutKeepsItsValueNullClearsItAndAReplacementCarriesItOver() throws {
        let stored = Installation(user: "42", timeZone: "Europe/Berlin", locale: "de-DE", appVersion: "2.3", tags: ["plan": .string("pro")])
        var update = InstallationUpdate()
        try update.set("appVersion", json: .string("2.4"), zones: .system)
        try update.set("user", json: .null, zones: .system)
        let after = update.applied(to: stored, replaced: nil)
        #expect(after == Installation(timeZone: "Europe/Berlin", locale: "de-DE", appVersion: "2.4", tags: ["plan": .string("pro")]))
        // A new token replacing an old one takes the old one's fields unless given.
        let replaced = update.applied(to: nil, replaced: stored)
        #expect(replaced.timeZone == "Europe/Berlin" && replaced.user == nil && replaced.appVersion == "2.4" && replaced.tags == ["plan": .string("pro")])
        // Nothing given: nothing changes.
        #expect(InstallationUpdate().applied(to: stored, replaced: nil) == stored)
        var clearTags = InstallationUpdate()
        try clearTags.set("tags", json: .null, zones: .system)
        #expect(clearTags.applied(to: stored, replaced: nil).tags.isEmpty)
    }

    @Test(arguments: [
        ("timeZone", JSONValue.string("Europe/Berlin"), true),
        ("timeZone", .string("UTC"), true),
        ("timeZone", .string("Mars/Olympus"), false),
        ("timeZone", .string("CET+1"), false),
        ("timeZone", .string("GMT+2"), false),  // an offset, which Foundation's TimeZone(identifier:) accepts
        ("timeZone", .string("UTC+1"), false),
        ("timeZone", .string("PST"), false),  // an abbreviation ICU knows and the tz database does not
        ("timeZone", .string("asia/kolkata"), false),
        ("timeZone", .string("Asia/Kolkata"), true),
        ("timeZone", .string("Etc/UTC"), true),
        ("timeZone", .int(1), false),
        ("locale", .string("de_DE"), true),
        ("locale", .string("zh-Hant-TW"), true),
        ("locale", .string("es-419"), true),
        ("locale", .string("german"), true),
        ("locale", .string("d"), false),
        ("locale", .string("de DE"), false),
        ("locale", .string("de--DE"), false),
        ("appVersion", .string("2.3.1 (45)"), true),
        ("appVersion", .string(""), false),
        ("appVersion", .string(String(repeating: "9", count: 65)), false),
        ("user", .string("alice@example.com"), true),
        ("user", .string("a/b"), false),
        ("user", .string(String(repeating: "u", count: 129)), false),
        ("installation", .string("6E1F4C2A-0B9D"), true),
        ("installation", .string("has space"), false),
        ("tags", .object([("plan", .string("pro")), ("score", .int(3)), ("beta", .bool(true))]), true),
        ("tags", .object([("nested", .object([]))]), false),
        ("tags", .object([("a.b", .int(1))]), false),
        ("tags", .object([("long", .string(String(repeating: "x", count: 257)))]), false),
        ("tags", .object((0..<33).map { ("k\($0)", JSONValue.int(1)) }), false),
        ("tags", .array([]), false),
    ]) func eachFieldIsCheckedAndABadOneNamesItself(_ field: String, _ value: JSONValue, _ ok: Bool) {
        var update = InstallationUpdate()
        do {
            try update.set(field, json: value, zones: .system)
            #expect(ok, "\(field) = \(value.encodedString) was accepted")
        } catch {
            #expect(!ok, "\(field) = \(value.encodedString): \(error.message)")
            #expect(error.field == field && error.message.contains(field))
        }
    }

    /// Every name the system's tz database defines (`Z` and `L` lines of tzdata.zi: zone1970.tab's zones, the
    /// `backward` links, `Etc/*`) registers, and is stored as its canonical zone. The list is read here from the
    /// file, not from Foundation (whose list lacked `Asia/Kolkata` and `Etc/UTC`).
    @Test func everyNameOfTheSystemsTzDatabaseRegistersAsItsCanonicalZone() throws {
        let text = try String(contentsOfFile: "/usr/share/zoneinfo/tzdata.zi", encoding: .utf8)
        var zones: Set<String> = [], links: [(name: String, target: String)] = []
        for line in text.split(separator: "\n") {
            let f = line.split(separator: " ")
            if f.first == "Z" { zones.insert(String(f[1])) }
            if f.first == "L" { links.append((String(f[2]), String(f[1]))) }
        }
        #expect(zones.count > 300 && links.count > 100)
        #expect(zones.contains("Asia/Kolkata") && zones.contains("Etc/UTC") && zones.contains("Etc/GMT+12"))
        let names = TimeZoneNames(tzdataZi: text)
        for zone in zones.sorted() {
            var update = InstallationUpdate()
            try update.set("timeZone", json: .string(zone), zones: names)
            #expect(update.timeZone == .set(zone))
        }
        for link in links {
            var update = InstallationUpdate()
            try update.set("timeZone", json: .string(link.name), zones: names)
            let stored = try #require(update.timeZone.value)
            #expect(zones.contains(stored), "\(link.name) stored as \(stored), not a zone")
        }
        #expect(try InstallationRules.timeZone("Asia/Calcutta", zones: names) == "Asia/Kolkata")
        #expect(try InstallationRules.timeZone("UTC", zones: names) == "Etc/UTC")
        #expect(try InstallationRules.timeZone("Etc/UTC", zones: names) == "Etc/UTC")
        // The parser reads every zone and link the line-by-line reading above finds, and nothing else.
        #expect(names.zones == zones)
        #expect(names.links.count == Set(links.map(\.name)).count)
    }

    /// Only `Z` and `L` lines name anything: a rule line, a comment, a field that merely starts with Z or L, a line
    /// without its name, or one with the wrong field count is passed over.
    @Test func onlyZoneAndLinkLinesOfTzdataNameZones() {
        let text = """
            # version test
            R d 1916 o - Jun 14 23s 1 S
            Z Europe/Paris 0:9:21 - LMT 1891 Mar 16
            Zx Not/AZone 0 - X
            L Europe/Paris Europe/Monaco
            L Europe/Monaco Europe/Old
            Lx Europe/Paris Not/ALink
            L Europe/Paris
            Z
            Z   
              Z Indented/Zone 1 - X

            Z Last/Line 0 - Y
            """
        let names = TimeZoneNames(tzdataZi: text)
        #expect(names.zones == ["Europe/Paris", "Indented/Zone", "Last/Line"])
        #expect(names.links == ["Europe/Monaco": "Europe/Paris", "Europe/Old": "Europe/Paris"])
    }

    @Test func localesAreStoredInCanonicalCase() throws {
        #expect(try InstallationRules.locale("DE_de") == "de-DE")
        #expect(try InstallationRules.locale("zh_hant_tw") == "zh-Hant-TW")
        #expect(try InstallationRules.locale("en-us-x-twain") == "en-US-x-twain")
    }

    @Test func aDeviceGetsItsLocalesTextThenItsLanguagesThenTheDefault() {
        let texts = ["default": "Hello", "de": "Hallo", "de-AT": "Servus", "pt-BR": "Olá"]
        #expect(LocaleChoice.text(for: "de-AT", in: texts) == "Servus")
        #expect(LocaleChoice.text(for: "de-DE", in: texts) == "Hallo")
        #expect(LocaleChoice.text(for: "de", in: texts) == "Hallo")
        #expect(LocaleChoice.text(for: "pt-PT", in: texts) == "Hello")  // only pt-BR: no language match
        #expect(LocaleChoice.text(for: nil, in: texts) == "Hello")
        #expect(LocaleChoice.text(for: "fr-FR", in: texts) == "Hello")
    }

    @Test func aUserProofIsTheHexMacOfTheUserIdComparedWhole() {
        // A stand-in MAC: the check's rules (hex, case, length, per user) do not depend on the function.
        let mac: ([UInt8], [UInt8]) -> [UInt8] = { key, data in (0..<32).map { i in key[i % key.count] &+ data[i % data.count] &+ UInt8(i) } }
        let secret = Array("s3cret".utf8)
        let proof = UserAuth.proof(user: "42", secret: secret, mac: mac)
        #expect(proof.count == 64 && proof == proof.lowercased())
        #expect(UserAuth.verify(userAuth: proof, user: "42", secret: secret, mac: mac))
        #expect(UserAuth.verify(userAuth: proof.uppercased(), user: "42", secret: secret, mac: mac))
        #expect(!UserAuth.verify(userAuth: proof, user: "43", secret: secret, mac: mac))
        #expect(!UserAuth.verify(userAuth: proof, user: "42", secret: Array("other".utf8), mac: mac))
        #expect(!UserAuth.verify(userAuth: String(proof.dropLast()), user: "42", secret: secret, mac: mac))
        #expect(!UserAuth.verify(userAuth: "", user: "42", secret: secret, mac: mac))
    }

    @Test func theZoneAtAnInstantNeverChangesOnceThatInstantHasPassed() {
        // Zone changes at t=100 (Berlin→Tokyo) and t=200 (Tokyo→New York); a job's reference instant is 150.
        var history = TimeZoneHistory()
        #expect(history.zone(at: 150, current: "Europe/Berlin") == "Europe/Berlin")
        history = history.recording(old: "Europe/Berlin", atMs: 100)
        #expect(history.zone(at: 150, current: "Asia/Tokyo") == "Asia/Tokyo")
        history = history.recording(old: "Asia/Tokyo", atMs: 200)
        #expect(history.zone(at: 150, current: "America/New_York") == "Asia/Tokyo")
        #expect(history.zone(at: 50, current: "America/New_York") == "Europe/Berlin")
        #expect(history.zone(at: 250, current: "America/New_York") == "America/New_York")
        // Stored and read back; "no zone" is kept as such.
        let none = TimeZoneHistory().recording(old: nil, atMs: 10)
        #expect(TimeZoneHistory(stored: none.storedText).zone(at: 5, current: "UTC") == nil)
        #expect(TimeZoneHistory(stored: history.storedText) == history)
        // Entries no job can ask about any more are dropped.
        let later = history.recording(old: "America/New_York", atMs: 200 + TimeZoneHistory.keptMs + 1)
        #expect(later.entries.count == 1)
    }
}

extension TimeZoneNames {
    /// The system's tz database, read from its file (what PushStore's `SystemTimeZones` reads at start-up).
    static let system: TimeZoneNames = {
        let text = (try? String(contentsOfFile: "/usr/share/zoneinfo/tzdata.zi", encoding: .utf8)) ?? ""
        return TimeZoneNames(tzdataZi: text)
    }()
}
