import PushCore
import Testing

@Suite struct DeviceTokenTests {
    static let seedHex = "740f4707bebcf74f9b7c25d48e3358945f6aa01da5ddb387462c7eaf61bb78ad"

    @Test func parsesNSDataDescriptionForm() throws {
        let token = try DeviceToken(parsing: "<740f4707 bebcf74f 9b7c25d4 8e335894 5f6aa01d a5ddb387 462c7eaf 61bb78ad>")
        #expect(token.hex == Self.seedHex)
    }

    @Test func canonicalisesCaseAndWhitespace() throws {
        let token = try DeviceToken(parsing: "  \(Self.seedHex.uppercased())\n")
        #expect(token.hex == Self.seedHex)
        #expect(token.bytes.count == 32)
        #expect(try DeviceToken(bytes: token.bytes) == token)
    }

    @Test(arguments: [8, 16, 32, 64, 100])
    func acceptsVariableLengths(bytes: Int) throws {
        let hex = String(repeating: "a1", count: bytes)
        #expect(try DeviceToken(parsing: hex).bytes.count == bytes)
    }

    @Test func masksForLogs() throws {
        #expect(try DeviceToken(parsing: Self.seedHex).masked == "740f47…78ad")
    }

    @Test(arguments: [
        ("", DeviceTokenError.Rule.empty),
        ("   ", .empty),
        ("<>", .empty),
        ("abc", .oddLength),
        ("zz" + String(repeating: "00", count: 31), .notHex),
        ("74:0f:47:07:be:bc:f7:4f", .notHex),
        ("<740f4707 bebcf74f", .unbalancedBrackets),
        ("740f4707>", .unbalancedBrackets),
        (String(repeating: "00", count: 7), .badLength(bytes: 7)),
        (String(repeating: "00", count: 101), .badLength(bytes: 101)),
    ])
    func rejectsInvalidForms(input: String, rule: DeviceTokenError.Rule) {
        #expect(throws: DeviceTokenError.self) { try DeviceToken(parsing: input) }
        do {
            _ = try DeviceToken(parsing: input)
        } catch {
            #expect(error.rule == rule)
            #expect(!error.description.isEmpty)
        }
    }

    @Test func errorMessagesNameTheRule() {
        do {
            _ = try DeviceToken(parsing: String(repeating: "00", count: 7))
            Issue.record("expected an error")
        } catch {
            #expect(error.description.contains("7 bytes"))
            #expect(error.description.contains("8…100"))
        }
    }

    @Test func surroundingWhitespaceIncludingCRLFIsIgnored() throws {
        let hex = "740f4707bebcf74f9b7c25d48e3358945f6aa01da5ddb387462c7eaf61bb78ad"
        #expect(try DeviceToken(parsing: "\r\n\t " + hex + " \r\n").hex == hex)
        #expect(try DeviceToken(parsing: "<740f4707 bebcf74f 9b7c25d4 8e335894 5f6aa01d a5ddb387 462c7eaf 61bb78ad>\r\n").hex == hex)
        #expect(throws: DeviceTokenError.self) { try DeviceToken(parsing: "\r\n") }
    }
}
