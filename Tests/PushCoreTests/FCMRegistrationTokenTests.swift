import PushCore
import Testing

@Suite struct FCMRegistrationTokenTests {
    /// A token in today's form: `<22 characters>:APA91b<134 characters>`.
    static let token = "dQw4w9WgXcQ-ABCDEFGHIJ:APA91b" + String(repeating: "Zk_9-xY7", count: 16) + "abcdef"

    static func refusal(_ text: String, field: String = "token") -> FieldError? {
        do { _ = try FCMRegistrationToken(parsing: text, field: field); return nil } catch { return error }
    }

    @Test func aTokenInTodaysFormIsKeptVerbatim() throws {
        let parsed = try FCMRegistrationToken(parsing: Self.token)
        #expect(parsed.value == Self.token)
        #expect(parsed.description == Self.token)
    }

    @Test func theBoundsAre32To4096BytesInclusive() throws {
        #expect(try FCMRegistrationToken(parsing: String(repeating: "a", count: 32)).value.count == 32)
        #expect(try FCMRegistrationToken(parsing: String(repeating: "a", count: 4096)).value.count == 4096)
        let short = Self.refusal(String(repeating: "a", count: 31))
        #expect(short?.field == "token")
        #expect(short?.message.contains("not 31") == true)
        #expect(Self.refusal(String(repeating: "a", count: 4097))?.field == "token")
        #expect(Self.refusal("")?.field == "token")
    }

    @Test func onlyFCMsAlphabetIsAcceptedAndTheInsideIsNeverParsed() throws {
        // Any arrangement of the alphabet passes: no `:APA91b` is required.
        #expect(try FCMRegistrationToken(parsing: String(repeating: "-_:09azAZ", count: 4)).value.count == 36)
        for bad in [" ", "/", "+", "=", ".", "é", "\n", "%"] {
            let text = String(Self.token.dropLast()) + bad
            #expect(Self.refusal(text)?.message.contains("only A-Z a-z 0-9 - _ :") == true, "\(bad)")
        }
    }

    @Test func theErrorNamesTheFieldItWasGiven() {
        let error = Self.refusal("short", field: "oldToken")
        #expect(error?.field == "oldToken")
        #expect(error?.message.hasPrefix("oldToken ") == true)
    }
}
