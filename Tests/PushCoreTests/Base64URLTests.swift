import PushCore
import Testing

@Suite struct Base64URLTests {
    @Test func roundTripsEveryLengthWithoutPadding() {
        for length in 0..<40 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 * 97 + 251) }
            let text = Base64URL.encode(bytes)
            #expect(!text.contains("=") && !text.contains("+") && !text.contains("/"))
            #expect(Base64URL.decode(text) == bytes)
        }
        #expect(Base64URL.encode([0xFB, 0xFF]) == "-_8")
    }

    @Test func decodingIsCanonical() {
        #expect(Base64URL.decode("-_8") == [0xFB, 0xFF])
        #expect(Base64URL.decode("-_8=") == [0xFB, 0xFF])
        for bad in ["+/8", "-_8==", "-_9", "A", "AB=C", "AB =", "AB\n", "AB===", "=AB"] {
            #expect(Base64URL.decode(bad) == nil, "\(bad)")
        }
    }
}
