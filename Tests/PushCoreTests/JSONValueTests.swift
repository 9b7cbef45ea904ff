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

    @Test func comparesObjectsAsUnorderedMaps() throws {
        #expect(try JSONValue(parsing: #"{"a":1,"b":2}"#) == JSONValue(parsing: #"{"b":2,"a":1.0}"#))
        #expect(try JSONValue(parsing: #"{"a":1}"#) != JSONValue(parsing: #"{"a":2}"#))
    }
}
