import PushCore
import Testing

@testable import PushSender

/// The sender maps each notification once: the same notification is a hit, any difference in what the mapping reads
/// is a miss, and a broadcast's per-locale notifications stay cached together.
@Suite struct WebPushTemplateCacheTests {
    static func payload(_ text: String) -> [UInt8] { Array(#"{"aps":{"alert":"\#(text)"}}"#.utf8) }

    @Test func eachNotificationIsMappedForWhatItsMappingReads() {
        var cache = WebPushTemplateCache()
        let a = cache.mapping(payload: Self.payload("a"), pushType: .alert, collapseId: nil, declarative: false)
        guard case .send(let template) = a else {
            Issue.record("not mapped")
            return
        }
        #expect(String(decoding: template.message(id: "x"), as: UTF8.self) == #"{"id":"x","body":"a"}"#)
        // Another payload, collapse id or push type each map anew.
        let b = cache.mapping(payload: Self.payload("b"), pushType: .alert, collapseId: nil, declarative: false)
        #expect(b != a)
        let tagged = cache.mapping(payload: Self.payload("a"), pushType: .alert, collapseId: "t", declarative: false)
        guard case .send(let t) = tagged else {
            Issue.record("not mapped")
            return
        }
        #expect(String(decoding: t.message(id: "x"), as: UTF8.self) == #"{"id":"x","body":"a","tag":"t"}"#)
        #expect(cache.mapping(payload: Self.payload("a"), pushType: .background, collapseId: nil, declarative: false)
            == .skip(WebPushPayload.silentReason))
        // And the first is still what it was.
        #expect(cache.mapping(payload: Self.payload("a"), pushType: .alert, collapseId: nil, declarative: false) == a)
    }

    @Test func moreNotificationsThanItHoldsStillMapEachCorrectly() {
        var cache = WebPushTemplateCache()
        for round in 0..<3 {
            for n in 0..<(WebPushTemplateCache.capacity + 3) {
                guard case .send(let template) = cache.mapping(
                    payload: Self.payload("n\(n)"), pushType: .alert, collapseId: nil, declarative: false)
                else {
                    Issue.record("not mapped")
                    return
                }
                #expect(String(decoding: template.message(id: "\(round)"), as: UTF8.self) == #"{"id":"\#(round)","body":"n\#(n)"}"#)
            }
        }
    }
}
