import PushCore
import Testing

/// The Push Kit mapping: what an HMS Core device receives for a notification the engine prepared in APNs' form.
@Suite struct HMSPayloadTests {
    static let token = "IQAAAACy0htoAACfi7GvwXiTflj6vow"
    static let nowMs: Int64 = 1_800_000_000_000

    static func map(
        _ json: String, type: PushType = .alert, priority: PushPriority = .immediate, expiration: Int64? = nil,
        collapseId: String? = nil, settings: HMSSettings = HMSSettings(clientId: "1", clientSecretFile: "s")
    ) -> HMSPayload.Mapping {
        HMSPayload.map(
            apnsPayload: Array(json.utf8), pushType: type, priority: priority, expiration: expiration, collapseId: collapseId,
            token: token, settings: settings, nowMs: nowMs)
    }

    static func text(
        _ json: String, type: PushType = .alert, priority: PushPriority = .immediate, expiration: Int64? = nil,
        collapseId: String? = nil, settings: HMSSettings = HMSSettings(clientId: "1", clientSecretFile: "s")
    ) -> String? {
        switch map(json, type: type, priority: priority, expiration: expiration, collapseId: collapseId, settings: settings) {
        case .send(let bytes): String(decoding: bytes, as: UTF8.self)
        case .skip: nil
        }
    }

    @Test func anAlertMapsTextImageClickSoundBadgeAndCategoryWithTheRestAsOneJSONTextInData() {
        let settings = HMSSettings(clientId: "1", clientSecretFile: "s", category: "IM", badgeClass: "com.example.Main")
        let apns = #"{"aps":{"alert":{"title":"Sale","subtitle":"Today","body":"50% off"},"sound":"chime.caf","badge":3},"image":"https://shop.example/s.png","channel_id":"deals","tag":"sale","click_action":"OPEN_SALE","orderId":42,"tags":["a"]}"#
        #expect(Self.text(apns, expiration: 1_800_000_060, collapseId: "7", settings: settings)
            == #"{"validate_only":false,"message":{"data":"{\"orderId\":42,\"tags\":[\"a\"]}","android":{"collapse_key":7,"urgency":"HIGH","category":"IM","ttl":"60s","notification":{"title":"Sale","body":"Today\n50% off","image":"https://shop.example/s.png","channel_id":"deals","tag":"sale","default_sound":false,"sound":"/raw/chime","badge":{"set_num":3,"class":"com.example.Main"},"click_action":{"type":1,"action":"OPEN_SALE"}}},"token":["IQAAAACy0htoAACfi7GvwXiTflj6vow"]}}"#)
    }

    @Test func aURLOpensAPageADefaultSoundIsTheDefaultAndACollapseIdThatIsNoNumberIsTheTag() {
        let apns = #"{"aps":{"alert":{"title":"T","body":"B"},"sound":"default","badge":5},"url":"https://example.com/a"}"#
        #expect(Self.text(apns, priority: .conserve, collapseId: "score-update")
            == #"{"validate_only":false,"message":{"android":{"urgency":"NORMAL","notification":{"title":"T","body":"B","tag":"score-update","default_sound":true,"click_action":{"type":2,"url":"https://example.com/a"}}},"token":["IQAAAACy0htoAACfi7GvwXiTflj6vow"]}}"#)
    }

    @Test func aStringAlertNeedsTheAppsDefaultTitleOrIsSkippedByName() {
        guard case .skip(let reason) = Self.map(#"{"aps":{"alert":"Hi"}}"#) else {
            Issue.record("a title-less alert was sent to Push Kit")
            return
        }
        #expect(reason.contains("defaultTitle"))
        let settings = HMSSettings(clientId: "1", clientSecretFile: "s", defaultTitle: "Shop")
        #expect(Self.text(#"{"aps":{"alert":"Hi"}}"#, settings: settings)
            == #"{"validate_only":false,"message":{"android":{"urgency":"HIGH","notification":{"title":"Shop","body":"Hi","click_action":{"type":3}}},"token":["IQAAAACy0htoAACfi7GvwXiTflj6vow"]}}"#)
    }

    @Test func aBackgroundPushIsADataMessageWithItsKeysAndAtLeastAnEmptyObject() {
        #expect(Self.text(#"{"aps":{"content-available":1},"image":"x.png","sync":{"since":5}}"#, type: .background, expiration: 1_799_999_000)
            == #"{"validate_only":false,"message":{"data":"{\"image\":\"x.png\",\"sync\":{\"since\":5}}","android":{"urgency":"NORMAL","ttl":"0s"},"token":["IQAAAACy0htoAACfi7GvwXiTflj6vow"]}}"#)
        #expect(Self.text(#"{"aps":{"badge":2}}"#)
            == #"{"validate_only":false,"message":{"data":"{}","android":{"urgency":"NORMAL"},"token":["IQAAAACy0htoAACfi7GvwXiTflj6vow"]}}"#)
    }

    @Test func appleOnlyPushTypesAreSkippedByName() {
        guard case .skip(let reason) = Self.map(#"{"aps":{}}"#, type: .voip) else {
            Issue.record("a VoIP push was sent to Push Kit")
            return
        }
        #expect(reason.contains("voip"))
    }
}

/// Push Kit's answers, read as the verdicts of the issue's table.
@Suite struct HMSAnswerRuleTests {
    static func kind(_ status: Int, _ body: String, token: String? = "tok") -> AnswerVerdict.Kind {
        HMSAnswerRule.verdict(for: HMSAnswer(status: status, body: Array(body.utf8)), token: token).kind
    }

    @Test func eachDocumentedCodeGetsItsVerdict() {
        #expect(Self.kind(200, #"{"code":"80000000","msg":"Success","requestId":"1"}"#) == .accepted)
        #expect(Self.kind(400, #"{"code":"80300007","msg":"All the tokens are invalid","requestId":"1"}"#) == .tokenDead)
        #expect(Self.kind(401, #"{"code":"80200003","msg":"Oauth Token expired.","requestId":"1"}"#) == .credentialFailure)
        #expect(Self.kind(401, #"{"code":"80200001","msg":"Oauth authentication error","requestId":"1"}"#) == .credentialFailure)
        #expect(Self.kind(400, #"{"code":"80100003","msg":"Illegal payload","requestId":"1"}"#) == .permanent)
        #expect(Self.kind(400, #"{"code":"80300008","msg":"too large","requestId":"1"}"#) == .permanent)
        #expect(Self.kind(503, "Traffic control") == .retryable)
        #expect(Self.kind(502, "<html>bad gateway</html>") == .retryable)
        #expect(Self.kind(500, #"{"code":"81000001","msg":"internal"}"#) == .retryable)
        #expect(Self.kind(404, "not found") == .permanent)
        #expect(Self.kind(400, #"{"code":"89999999","msg":"new"}"#) == .permanent)
    }

    @Test func aPartialSuccessIsDeadOnlyForATokenItNames() {
        let body = #"{"code":"80100000","msg":"{\"success\":1,\"failure\":1,\"illegal_tokens\":[\"bad\"]}","requestId":"1"}"#
        let answer = HMSAnswer(status: 200, body: Array(body.utf8))
        #expect(answer.illegalTokens == ["bad"])
        #expect(Self.kind(200, body, token: "bad") == .tokenDead)
        #expect(Self.kind(200, body, token: "good") == .accepted)
    }
}

/// The HMS push token's form, as registration judges it.
@Suite struct HMSPushTokenTests {
    @Test func aTokenOfHuaweisAlphabetAndLengthIsKeptVerbatimAndOthersAreRefusedByField() throws {
        let good = "IQAAAACy0htoAACfi7GvwXiTflj6vow-XJ4gsQYPBfqvy8mgYkLHMUwu+/=="
        #expect(try HMSPushToken(parsing: good).value == good)
        #expect(throws: FieldError.self) { try HMSPushToken(parsing: "IQAAAACy0htoAACfi7GvwXiTflj6vow XJ4gsQ") }
        #expect(throws: FieldError.self) { try HMSPushToken(parsing: "short") }
        do {
            _ = try HMSPushToken(parsing: String(repeating: "A", count: 1025), field: "oldToken")
            Issue.record("an over-long token was accepted")
        } catch {
            #expect(error.field == "oldToken")
        }
    }
}
