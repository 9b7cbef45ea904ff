import PushCore
import Testing

/// Property test: oversized alerts shrink to a maximal grapheme prefix plus "…" within the limit.
@Suite struct TruncationTests {
    /// Pieces that stress grapheme clusters, multi-byte UTF-8 and JSON escaping.
    static let pieces: [String] = [
        "a", "Z", " ", "é", "e\u{301}", "漢", "字", "😀", "👍🏽", "👨‍👩‍👧‍👦", "🏳️‍🌈", "🇵🇱",
        "\"", "\\", "\n", "\t", "\u{01}", "\u{1F}", "/", "ą", "n\u{303}\u{323}",
    ]

    struct SplitMix: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    @Test(arguments: 0..<40)
    func truncatedPayloadIsMaximalAndValid(seed: Int) throws {
        var rng = SplitMix(state: UInt64(seed) &* 7919)
        let count = Int.random(in: 300...3000, using: &rng)
        let text = (0..<count).map { _ in Self.pieces.randomElement(using: &rng)! }.joined()
        let limit = [256, 1024, 2048, 4096].randomElement(using: &rng)!
        let useDictionary = Bool.random(using: &rng)
        let alert = useDictionary ? Alert(title: "Title \"q\"", body: text) : Alert.text(text)
        let payload = Payload(aps: APS(alert: alert, sound: .named("default")), custom: [("id", .int(Int64(seed)))])

        let encodedFull = payload.json.encoded.count
        let prepared = try payload.prepare(NotificationOptions(limit: limit))
        #expect(prepared.payload.count <= limit)
        if encodedFull <= limit {
            #expect(!prepared.truncated)
            return
        }
        #expect(prepared.truncated)
        // Valid UTF-8 and valid JSON.
        #expect(String(validating: prepared.payload, as: UTF8.self) != nil)
        let json = try JSONValue(parsing: prepared.payload)
        let alertValue = json["aps"]?["alert"]
        let body = try #require(useDictionary ? alertValue?["body"]?.stringValue : alertValue?.stringValue)
        #expect(body.hasSuffix("…"))
        // A whole-grapheme prefix of the original.
        let kept = String(body.dropLast())
        #expect(text.hasPrefix(kept))
        #expect(kept.count <= text.count)
        let keptCharacters = Array(kept)
        let original = Array(text)
        #expect(Array(original.prefix(keptCharacters.count)) == keptCharacters)
        // Maximal: one more grapheme would not fit.
        if keptCharacters.count < original.count {
            var longer = payload
            longer.aps.alert?.body = String(original.prefix(keptCharacters.count + 1)) + "…"
            #expect(longer.json.encoded.count > limit)
        }
    }

    @Test func failsWhenEvenAnEllipsisDoesNotFit() {
        let payload = Payload(aps: APS(alert: Alert(title: String(repeating: "t", count: 300), body: "body")))
        #expect(throws: PayloadError.self) { try payload.prepare(NotificationOptions(limit: 256)) }
    }

    @Test func readmeExampleFrenchAccents() throws {
        let p = try Payload(aps: APS(alert: .text(String(repeating: "é", count: 5000)))).prepare()
        #expect(p.payload.count <= 4096)
        #expect(p.payload.count >= 4094)
        #expect(p.payloadString.hasSuffix("…\"}}"))
    }
}
