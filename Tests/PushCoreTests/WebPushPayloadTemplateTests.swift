import PushCore
import Testing

/// A template gives, for every id, the bytes `map` gives: both forms, ids that need escaping, and payloads that
/// already hold the template's marker (so the split must move to another one).
@Suite struct WebPushPayloadTemplateTests {
    static let payloads: [(json: String, collapseId: String?, declarative: Bool)] = [
        (#"{"aps":{"alert":{"title":"Sale","subtitle":"Today","body":"50% off"},"sound":"default","badge":3},"url":"https://shop.example/sale","image":"https://shop.example/s.png","orderId":42,"tags":["a"]}"#, "sale-1", false),
        (#"{"aps":{"alert":"Hi"}}"#, nil, false),
        (#"{"aps":{"alert":{"title":"Sale","body":"50% off"},"badge":3},"url":"https://shop.example/sale","orderId":42,"data":{"id":""}}"#, "sale-1", true),
        (#"{"aps":{"alert":{"title":"T"},"sound":"default"},"url":"https://a.example/"}"#, nil, true),
        // The first markers, verbatim and after an escaped quote, in the payload's own strings and keys.
        (#"{"aps":{"alert":"\u0001id0"},"\u0001id1":"\"\u0001id2","k":["\u0001id3"]}"#, "\u{1}id4", false),
        (#"{"aps":{"alert":{"title":"\u0001id0"}},"url":"\u0001id1","d":"\u0001id0"}"#, "\u{1}id2", true),
    ]
    static let ids = ["8c1b6a52-3c1e-4d7a-9a51-0f7e2b9d4c11", "", "a\"b\\c\n\u{1f}é😀", "\u{1}id0"]

    @Test func aTemplatesMessageIsByteForByteWhatMapGivesForEveryId() throws {
        for p in Self.payloads {
            let payload = Array(p.json.utf8)
            guard case .send(let template) = WebPushPayload.template(
                apnsPayload: payload, pushType: .alert, collapseId: p.collapseId, declarative: p.declarative)
            else {
                Issue.record("not mapped: \(p.json)")
                continue
            }
            for id in Self.ids {
                let mapped = WebPushPayload.map(
                    apnsPayload: payload, pushType: .alert, id: id, collapseId: p.collapseId, declarative: p.declarative)
                #expect(mapped == .send(template.message(id: id)), "\(p.json) with id \(id)")
            }
        }
    }

    @Test func aNotificationWebPushDoesNotCarrySkipsWithMapsReason() {
        let silent = Array(#"{"aps":{"content-available":1}}"#.utf8)
        #expect(WebPushPayload.template(apnsPayload: silent, pushType: .background, collapseId: nil, declarative: false)
            == .skip(WebPushPayload.silentReason))
        #expect(WebPushPayload.template(apnsPayload: Array("[1]".utf8), pushType: .alert, collapseId: nil, declarative: false)
            == .skip("the notification's payload is not a JSON object"))
    }

    @Test func controlCharactersAreEscapedWithLowercaseHex() {
        #expect(JSONValue.string("\u{1f}\u{0b}\u{00}").encodedString == #""\u001f\u000b\u0000""#)
    }
}
