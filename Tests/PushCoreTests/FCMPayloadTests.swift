import PushCore
import Testing

/// The FCM mapping: what an Android device receives for a notification the engine prepared in APNs' form.
@Suite struct FCMPayloadTests {
    static let token = "fcm-token-1"
    static let nowMs: Int64 = 1_800_000_000_000

    static func text(
        _ json: String, type: PushType = .alert, priority: PushPriority = .immediate, expiration: Int64? = nil,
        collapseId: String? = nil
    ) -> String? {
        switch FCMPayload.map(
            apnsPayload: Array(json.utf8), pushType: type, priority: priority, expiration: expiration, collapseId: collapseId,
            token: token, nowMs: nowMs)
        {
        case .send(let bytes): String(decoding: bytes, as: UTF8.self)
        case .skip: nil
        }
    }

    @Test func anAlertMapsTextImageAndAndroidFieldsWithEveryOtherKeyAsAStringInData() {
        let apns = #"{"aps":{"alert":{"title":"Sale","subtitle":"Today","body":"50% off"},"sound":"default","badge":3},"image":"https://shop.example/s.png","channel_id":"deals","tag":"sale","click_action":"OPEN_SALE","orderId":42,"note":"hi","tags":["a"],"flag":true,"none":null}"#
        #expect(Self.text(apns, expiration: 1_800_000_060, collapseId: "sale-1")
            == #"{"message":{"token":"fcm-token-1","notification":{"title":"Sale","body":"Today\n50% off","image":"https://shop.example/s.png"},"data":{"orderId":"42","note":"hi","tags":"[\"a\"]","flag":"true","none":"null"},"android":{"collapse_key":"sale-1","priority":"HIGH","ttl":"60s","notification":{"channel_id":"deals","tag":"sale","click_action":"OPEN_SALE","sound":"default","notification_count":3}}}}"#)
    }

    @Test func aStringAlertIsTheBodyAndAConservingPriorityIsNormal() {
        #expect(Self.text(#"{"aps":{"alert":"Hi","sound":{"name":"ping.caf","critical":1}}}"#, priority: .conserve)
            == #"{"message":{"token":"fcm-token-1","notification":{"body":"Hi"},"android":{"priority":"NORMAL","notification":{"sound":"ping.caf"}}}}"#)
    }

    @Test func aBackgroundPushIsDataOnlyAtNormalPriorityWithItsKeysKeptAsData() {
        let apns = #"{"aps":{"content-available":1},"image":"x.png","channel_id":"c","sync":{"since":5}}"#
        #expect(Self.text(apns, type: .background, priority: .conserve)
            == #"{"message":{"token":"fcm-token-1","data":{"image":"x.png","channel_id":"c","sync":"{\"since\":5}"},"android":{"priority":"NORMAL"}}}"#)
        // An alert without text (a badge only) is data-only too: Android would show an empty notification.
        #expect(Self.text(#"{"aps":{"badge":2}}"#) == #"{"message":{"token":"fcm-token-1","android":{"priority":"NORMAL"}}}"#)
    }

    @Test func theTimeToLiveIsTheWholeSecondsLeftAndNeverNegative() {
        #expect(Self.text(#"{"aps":{"alert":"a"}}"#, expiration: 1_800_000_000)?.contains(#""ttl":"0s""#) == true)
        #expect(Self.text(#"{"aps":{"alert":"a"}}"#, expiration: 1_700_000_000)?.contains(#""ttl":"0s""#) == true)
        #expect(Self.text(#"{"aps":{"alert":"a"}}"#, expiration: 0)?.contains(#""ttl":"0s""#) == true)
        #expect(FCMPayload.secondsLeft(until: 1_800_000_010, nowMs: Self.nowMs + 1) == 9)
        #expect(FCMPayload.secondsLeft(until: 1_800_000_010, nowMs: Self.nowMs) == 10)
    }

    @Test func appleOnlyPushTypesAndNonObjectsAreSkippedWithAReason() {
        for type in [PushType.voip, .liveactivity, .complication, .location, .mdm, .widgets] {
            guard case .skip(let reason) = FCMPayload.map(
                apnsPayload: Array(#"{"aps":{"alert":"a"}}"#.utf8), pushType: type, priority: .immediate, expiration: nil,
                collapseId: nil, token: Self.token, nowMs: Self.nowMs)
            else { Issue.record("\(type) was sent"); continue }
            #expect(reason.contains("FCM has no \(type.rawValue) push"))
        }
        #expect(FCMPayload.map(
            apnsPayload: Array("[1]".utf8), pushType: .alert, priority: .immediate, expiration: nil, collapseId: nil,
            token: Self.token, nowMs: Self.nowMs) == .skip("the notification's payload is not a JSON object"))
    }
}
