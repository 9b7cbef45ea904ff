import PushCore
import Testing

/// The HarmonyOS mapping, answer rule and configuration: pure functions, each rule by example.
@Suite struct HarmonyOSPayloadTests {
    static let settings = HarmonyOSSettings(projectId: "101", serviceAccount: "/k.json", category: "IM", defaultTitle: "Chat")

    func map(_ payload: String, _ pushType: PushType = .alert, collapseId: String? = nil, expiration: Int64? = nil) -> HarmonyOSPayload.Mapping {
        HarmonyOSPayload.map(
            apnsPayload: Array(payload.utf8), pushType: pushType, expiration: expiration, collapseId: collapseId, token: "TOKEN",
            settings: Self.settings, nowMs: 1_000_000)
    }

    func body(_ mapping: HarmonyOSPayload.Mapping) -> (JSONValue?, Int?) {
        guard case .send(let bytes, let pushType) = mapping else { return (nil, nil) }
        return (try? JSONValue(parsing: bytes), pushType)
    }

    @Test func anAlertIsPushType0WithCategoryTitleBodyClickActionBadgeAndTTL() {
        let (json, type) = body(map(
            #"{"aps":{"alert":{"title":"Ann","subtitle":"re","body":"hi"},"badge":3},"room":"7","url":"https://x.example/r"}"#,
            collapseId: "42", expiration: 1060))
        #expect(type == 0)
        let n = json?["payload"]?["notification"]
        #expect(n?["category"]?.stringValue == "IM" && n?["title"]?.stringValue == "Ann" && n?["body"]?.stringValue == "re\nhi")
        #expect(n?["clickAction"]?["actionType"]?.intValue == 1 && n?["clickAction"]?["uri"]?.stringValue == "https://x.example/r")
        #expect(n?["clickAction"]?["data"]?["room"]?.stringValue == "7")
        #expect(n?["badge"]?["setNum"]?.intValue == 3 && n?["notifyId"]?.intValue == 42)
        #expect(json?["target"]?["token"]?.arrayValue?.first?.stringValue == "TOKEN")
        #expect(json?["pushOptions"]?["ttl"]?.intValue == 60)
    }

    @Test func aStringAlertTakesTheDefaultTitleAndWithoutOneIsSkipped() {
        #expect(body(map(#"{"aps":{"alert":"hi"}}"#)).0?["payload"]?["notification"]?["title"]?.stringValue == "Chat")
        var untitled = Self.settings
        untitled.defaultTitle = nil
        let mapping = HarmonyOSPayload.map(
            apnsPayload: Array(#"{"aps":{"alert":"hi"}}"#.utf8), pushType: .alert, expiration: nil, collapseId: nil, token: "T",
            settings: untitled, nowMs: 0)
        guard case .skip(let reason) = mapping else { Issue.record("sent \(mapping)"); return }
        #expect(reason.contains("title"))
    }

    @Test func aSilentPushIsABackgroundMessageAndVoIPIsNotSent() {
        let (json, type) = body(map(#"{"aps":{"content-available":1},"k":1}"#, .background))
        #expect(type == 6 && json?["payload"]?["extraData"]?.stringValue == #"{"k":1}"# && json?["payload"]?["notification"] == nil)
        guard case .skip = map(#"{"aps":{}}"#, .voip) else { Issue.record("VoIP sent"); return }
    }

    @Test func theAnswerRuleReadsV3IllegalTokensByReason() {
        func verdict(_ status: Int, _ body: String) -> AnswerVerdict.Kind {
            HarmonyOSAnswerRule.verdict(for: HarmonyOSAnswer(status: status, body: Array(body.utf8)), token: "T").kind
        }
        #expect(verdict(200, #"{"code":"80000000","msg":"Success","requestId":"1"}"#) == .accepted)
        #expect(verdict(400, #"{"code":"80300007","msg":"{\"illegalTokens\":{\"noRight\":[\"T\"]},\"failure\":1}"}"#) == .tokenDead)
        #expect(verdict(400, #"{"code":"80300007","msg":"All the tokens are invalid"}"#) == .tokenDead)
        #expect(verdict(200, #"{"code":"80100000","msg":"{\"illegalTokens\":{\"tokenFormatError\":[\"T\"]},\"success\":1,\"failure\":1}"}"#) == .tokenDead)
        #expect(verdict(200, #"{"code":"80100000","msg":"{\"illegalTokens\":{\"noPushTypeRight\":[\"T\"]},\"failure\":1}"}"#) == .permanent)
        #expect(verdict(200, #"{"code":"80100000","msg":"{\"illegalTokens\":{\"noRight\":[\"U\"]},\"success\":1,\"failure\":1}"}"#) == .accepted)
        #expect(verdict(401, #"{"code":"80200003","msg":"JWT expired"}"#) == .credentialFailure)
        #expect(verdict(400, #"{"code":"80300008","msg":"too large"}"#) == .permanent)
        #expect(verdict(503, "busy") == .retryable && verdict(401, "") == .credentialFailure)
    }

    @Test func theConfigurationRequiresADocumentedCategory() throws {
        func load(_ section: String) throws -> PushConfiguration {
            try PushConfiguration(json: Array(#"{"apps":{"chat":{"harmonyos":\#(section)}}}"#.utf8), baseDirectory: "/etc/pp", zones: .foundation())
        }
        let loaded = try load(#"{"projectId":"101","serviceAccount":"k.json","category":"EXPRESS","endpoint":"simulator"}"#)
        #expect(loaded.apps["chat"]?.harmonyos?.category == "EXPRESS" && loaded.apps["chat"]?.harmonyos?.serviceAccount == "/etc/pp/k.json")
        #expect(loaded.apps["chat"]?.services == [.harmonyos])
        #expect(loaded.secretFiles.map(\.key).contains("apps.chat.harmonyos.serviceAccount"))
        #expect(throws: ConfigurationError.self) { try load(#"{"projectId":"101","serviceAccount":"k.json"}"#) }
        #expect(throws: ConfigurationError.self) { try load(#"{"projectId":"101","serviceAccount":"k.json","category":"NEWS"}"#) }
        #expect(throws: ConfigurationError.self) { try load(#"{"projectId":"1/2","serviceAccount":"k.json","category":"IM"}"#) }
    }
}
