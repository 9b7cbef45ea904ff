import PushCore
import Testing

@Suite struct JSONValueTests {
    @Test func roundTripsAndKeepsOrder() throws {
        let text = #"{"b":1,"a":[true,false,null,-2.5,"x\ny\"\u00e9\ud83d\ude00"],"c":{}}"#
        let value = try JSONValue(parsing: text)
        #expect(value.objectPairs?.map(\.0) == ["b", "a", "c"])
        #expect(try JSONValue(parsing: value.encoded) == value)
        #expect(value["a"]?.encodedString.contains("é😀") == true)
    }

    @Test func escapesControlCharacters() {
        #expect(JSONValue.string("\u{01}\t\"\\").encodedString == #""\u0001\t\"\\""#)
        #expect(JSONValue.encodedLength(of: "\u{01}\t\"\\é") == 2 + 6 + 2 + 2 + 2 + 2)
    }

    @Test(arguments: [#"{"a":1,"a":2}"#, "{", "[1,]", "01", #""\x""#, "\"a\u{01}\"", "1 2", #""\ud800""#, "nul"])
    func rejectsInvalidJSON(text: String) {
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: text) }
    }

    @Test func aDuplicateKeyIsFoundAmongFewKeysAndAmongManyAtItsOffset() throws {
        let few = #expect(throws: JSONParseError.self) { try JSONValue(parsing: #"{"a":1,"b":2,"a":3}"#) }
        #expect(few?.offset == 13 && few?.message == #"duplicate key "a""#)
        let many = (0..<40).map { #""k\#($0)":\#($0)"# }
        #expect(try JSONValue(parsing: "{" + many.joined(separator: ",") + "}").objectPairs?.count == 40)
        let repeated = "{" + (many + [#""k3":0"#]).joined(separator: ",") + "}"
        let offset = repeated.utf8.count - #""k3":0}"#.utf8.count
        let among = #expect(throws: JSONParseError.self) { try JSONValue(parsing: repeated) }
        #expect(among?.offset == offset && among?.message == #"duplicate key "k3""#)
    }

    @Test func stringsWithAndWithoutEscapesAndInvalidUTF8() throws {
        #expect(try JSONValue(parsing: #"["plain é","ab\ncd\u00e9","\"x"]"#)
            == .array([.string("plain é"), .string("ab\ncdé"), .string("\"x")]))
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: [0x22, 0x61, 0xff, 0x22]) }
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: [0x22, 0x61, 0x5c, 0x6e, 0xc3, 0x22]) }
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: #""unterminated"#) }
    }

    @Test func comparesObjectsAsUnorderedMaps() throws {
        #expect(try JSONValue(parsing: #"{"a":1,"b":2}"#) == JSONValue(parsing: #"{"b":2,"a":1.0}"#))
        #expect(try JSONValue(parsing: #"{"a":1}"#) != JSONValue(parsing: #"{"a":2}"#))
    }
}
