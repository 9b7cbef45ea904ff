import PushCore
import Testing

/// `LocalizedText`: the per-locale text rule the API's per-locale objects and `pushctl --alert-for` share.
@Suite struct LocalizedTextTests {
    @Test func aDeviceGetsItsLocalesTextElseItsLanguagesElseTheDefault() throws {
        var texts = LocalizedText()
        try texts.set("alert", [("default", "Good morning"), ("de", "Guten Morgen"), ("de-AT", "Servus"), ("pt-BR", "Bom dia")])
        #expect(texts.locales == ["de", "de-AT", "pt-BR"])
        let cases: [(String?, String)] = [
            ("de-AT", "Servus"), ("de-DE", "Guten Morgen"), ("de", "Guten Morgen"), ("pt-BR", "Bom dia"), ("pt-PT", "Good morning"),
            ("en-US", "Good morning"), (nil, "Good morning"),
        ]
        for (locale, expected) in cases { #expect(texts.text("alert", for: locale) == expected, "\(locale ?? "none")") }
        #expect(texts.text("title", for: "de") == nil)
    }

    @Test func badKeysAMissingDefaultARepeatedLocaleAndTooManyEntriesAreRefusedNamingTheField() {
        let bad: [[(key: String, text: String)]] = [
            [("default", "x"), ("de_DE", "y")], [("default", "x"), ("DE", "y")], [("default", "x"), ("d", "y")], [("default", "x"), ("de-", "y")],
            [("de", "y")], [("default", "x"), ("de", "y"), ("de", "z")],
            [("default", "x")] + (0..<20).map { (key: "x" + String(UnicodeScalar(UInt8(97 + $0))), text: "t") },
        ]
        for entries in bad {
            var texts = LocalizedText()
            #expect(throws: FieldError.self, "\(entries)") { try texts.set("title", entries) }
            #expect(texts.isEmpty)
            do { try texts.set("title", entries) } catch { #expect(error.field == "title" && error.message.hasPrefix("title: ")) }
        }
    }

    @Test func everyVariantIsBuiltAndAFailingOneIsNamed() throws {
        var texts = LocalizedText()
        try texts.set("alert", [("default", "Hi"), ("fr", "Salut"), ("de", "Hallo")])
        struct Built: Error, Equatable { var message: String }
        let (prepared, variants) = try texts.prepare(
            { (locale) throws(Built) -> PreparedNotification in
                var aps = APS()
                aps.alert = .text(texts.text("alert", for: locale) ?? "")
                do { return try Payload(aps: aps, custom: []).prepare(NotificationOptions()) } catch { throw Built(message: "\(error)") }
            }, named: { locale, error in Built(message: "locale \(locale): \(error.message)") })
        #expect(prepared.payloadString == #"{"aps":{"alert":"Hi"}}"#)
        #expect(variants.mapValues { String(decoding: $0, as: UTF8.self) } == ["de": #"{"aps":{"alert":"Hallo"}}"#, "fr": #"{"aps":{"alert":"Salut"}}"#])
        #expect(throws: Built(message: "locale fr: too big")) {
            try texts.prepare({ (locale) throws(Built) -> PreparedNotification in
                if locale == "fr" { throw Built(message: "too big") }
                var aps = APS()
                aps.alert = .text("Hi")
                do { return try Payload(aps: aps, custom: []).prepare(NotificationOptions()) } catch { throw Built(message: "\(error)") }
            }, named: { locale, error in Built(message: "locale \(locale): \(error.message)") })
        }
    }
}
