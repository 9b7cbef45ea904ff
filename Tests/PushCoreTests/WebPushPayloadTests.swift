import PushCore
import Testing

/// The payload mapping: what a web device receives for a notification the engine prepared in APNs' form.
@Suite struct WebPushPayloadTests {
    static let id = "8c1b6a52-3c1e-4d7a-9a51-0f7e2b9d4c11"

    static func map(_ json: String, type: PushType = .alert, collapseId: String? = nil, declarative: Bool = false) -> WebPushPayload.Mapping {
        WebPushPayload.map(apnsPayload: Array(json.utf8), pushType: type, id: id, collapseId: collapseId, declarative: declarative)
    }

    static func text(_ mapping: WebPushPayload.Mapping) -> String? {
        if case .send(let bytes) = mapping { return String(decoding: bytes, as: UTF8.self) }
        return nil
    }

    @Test func anAlertBecomesTheServiceWorkerFormWithEveryFieldInOrder() {
        let apns = #"{"aps":{"alert":{"title":"Sale","subtitle":"Today","body":"50% off"},"sound":"default","badge":3},"url":"https://shop.example/sale","image":"https://shop.example/s.png","orderId":42,"tags":["a"]}"#
        #expect(Self.text(Self.map(apns, collapseId: "sale-1"))
            == #"{"id":"\#(Self.id)","title":"Sale","subtitle":"Today","body":"50% off","sound":"default","badge":3,"image":"https://shop.example/s.png","url":"https://shop.example/sale","tag":"sale-1","data":{"orderId":42,"tags":["a"]}}"#)
    }

    @Test func aStringAlertIsTheBodyAndAbsentFieldsAreLeftOut() {
        #expect(Self.text(Self.map(#"{"aps":{"alert":"Hi","sound":{"name":"ping.caf","critical":1}}}"#))
            == #"{"id":"\#(Self.id)","body":"Hi","sound":"ping.caf"}"#)
        // A url that is not a string stays custom data.
        #expect(Self.text(Self.map(#"{"aps":{"alert":"Hi"},"url":7}"#)) == #"{"id":"\#(Self.id)","body":"Hi","data":{"url":7}}"#)
    }

    @Test func theDeclarativeFormCarriesTitleNavigateBadgeAndData() {
        let apns = #"{"aps":{"alert":{"title":"Sale","subtitle":"Today","body":"50% off"},"badge":3},"url":"https://shop.example/sale","orderId":42}"#
        #expect(Self.text(Self.map(apns, collapseId: "sale-1", declarative: true))
            == #"{"web_push":8030,"notification":{"title":"Sale","body":"Today\n50% off","navigate":"https://shop.example/sale","tag":"sale-1","silent":true,"data":{"id":"\#(Self.id)","orderId":42}},"app_badge":3}"#)
        // With a sound it is not silent.
        let sounded = Self.text(Self.map(#"{"aps":{"alert":{"title":"T"},"sound":"default"},"url":"https://a.example/"}"#, declarative: true))
        #expect(sounded == #"{"web_push":8030,"notification":{"title":"T","navigate":"https://a.example/","data":{"id":"\#(Self.id)"}}}"#)
    }

    @Test func theDeclarativeFormNeedsATitleAndAURLElseTheServiceWorkerFormIsSent() {
        #expect(Self.text(Self.map(#"{"aps":{"alert":{"title":"T","body":"B"}}}"#, declarative: true))
            == #"{"id":"\#(Self.id)","title":"T","body":"B"}"#)
        #expect(Self.text(Self.map(#"{"aps":{"alert":"B"},"url":"https://a.example/"}"#, declarative: true))
            == #"{"id":"\#(Self.id)","body":"B","url":"https://a.example/"}"#)
    }

    @Test func silentAndAppleOnlyPushesAreNotSent() {
        #expect(Self.map(#"{"aps":{"content-available":1}}"#, type: .background) == .skip(WebPushPayload.silentReason))
        #expect(Self.map(#"{"aps":{"content-available":1},"k":1}"#) == .skip(WebPushPayload.silentReason))
        guard case .skip(let reason) = Self.map(#"{"aps":{"alert":"x"}}"#, type: .voip) else {
            Issue.record("a VoIP push was mapped")
            return
        }
        #expect(reason.contains("voip"))
        #expect(Self.map(#"{"aps":{"badge":3,"sound":"default"}}"#) == .skip(WebPushPayload.noTextReason))
        // content-available with an alert is an alert.
        #expect(Self.text(Self.map(#"{"aps":{"alert":"x","content-available":1}}"#)) == #"{"id":"\#(Self.id)","body":"x"}"#)
    }
}
