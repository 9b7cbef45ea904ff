import PushSimulator
import Foundation
import PushCore
import TestSupport
import Testing

/// The simulator's Huawei Push Kit side over real HTTP/2 + TLS: Huawei's OAuth endpoint (`POST /oauth2/v3/token`,
/// client credentials) grants a token that sends a message (recorded, one per token); each refusal of the token
/// endpoint and of `POST /v1/{clientId}/messages:send` is answered with Huawei's status and code; a partial success
/// names the invalid tokens in `msg`; tokens expire by lifetime and by `expireHMSAccessTokens()`; flow control is 503.
@Suite(.timeLimit(.minutes(2)))
struct HMSEndpointTests {
    static let clientId = "104523881"
    /// A secret with the characters a form must escape.
    static let secret = "a1+b2/c3=d4&e5 f6%"

    struct Answer {
        var status: Int?
        var json: JSONValue?
        var code: String? { json?["code"]?.stringValue }
        var msg: String? { json?["msg"]?.stringValue }
        var requestId: String? { json?["requestId"]?.stringValue }
    }

    /// A simulator trusting one app, a client and an access token granted to it.
    static func withToken(
        clock: ManualClock? = nil, configure: @escaping (inout SimulatorConfiguration) -> Void = { _ in },
        _ body: (SimulatorFixture, H2TestClient, String) async throws -> Void
    ) async throws {
        try await SimulatorFixture.run(.either, configure: {
            if let clock { $0.clock = { clock.now } }
            $0.hmsApps = [clientId: secret]
            configure(&$0)
        }) { fixture in
            let client = try await fixture.connect()
            do {
                let grant = try await Self.grant(client)
                #expect(grant.status == 200, "\(grant.json?.encodedString ?? "")")
                let token = try #require(grant.json?["access_token"]?.stringValue)
                try await body(fixture, client, token)
            } catch {
                await client.close()
                throw error
            }
            await client.close()
        }
    }

    /// `application/x-www-form-urlencoded`, as `URLSearchParams`/`urlencode` write it (space as `+`).
    static func form(_ fields: [(String, String)]) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._*")
        return fields.map { name, value in
            let escaped = value.addingPercentEncoding(withAllowedCharacters: allowed.union([" "]))?
                .replacingOccurrences(of: " ", with: "+") ?? value
            return name + "=" + escaped
        }.joined(separator: "&")
    }

    static func grant(
        _ client: H2TestClient, clientId: String = clientId, secret: String = secret,
        grantType: String = "client_credentials", contentType: String = "application/x-www-form-urlencoded;charset=utf-8",
        body: String? = nil
    ) async throws -> Answer {
        let text = body ?? form([("grant_type", grantType), ("client_id", clientId), ("client_secret", secret)])
        let response = try await client.send(.init(
            method: "POST", path: "/oauth2/v3/token", headers: [("content-type", contentType)], body: Array(text.utf8)))
        return Answer(status: response.status, json: try? JSONValue(parsing: response.body))
    }

    static func send(
        _ client: H2TestClient, _ body: String, token: String?, clientId: String = clientId,
        contentType: String = "application/json;charset=utf-8", method: String = "POST", path: String? = nil
    ) async throws -> Answer {
        var headers = [("content-type", contentType)]
        if let token { headers.append(("authorization", "Bearer \(token)")) }
        let response = try await client.send(.init(
            method: method, path: path ?? "/v1/\(clientId)/messages:send", headers: headers, body: Array(body.utf8)))
        return Answer(status: response.status, json: try? JSONValue(parsing: response.body))
    }

    /// A notification message to `tokens` as JSON text.
    static func message(_ tokens: [String], extra: String = "") -> String {
        let list = tokens.map { "\"\($0)\"" }.joined(separator: ",")
        return #"{"validate_only":false,"message":{"android":{"urgency":"HIGH","ttl":"86400s","collapse_key":-1,"#
            + #""notification":{"title":"Hi","body":"there","click_action":{"type":3}}}\#(extra),"token":[\#(list)]}}"#
    }

    @Test func aGrantThenAValidSendIsAcceptedAndRecordedOncePerToken() async throws {
        try await Self.withToken { fixture, client, token in
            #expect(token.count >= 100, "\(token)")
            #expect(token.allSatisfy { $0.isLetter || $0.isNumber || "+/=".contains($0) })
            #expect(fixture.simulator.isValidHMSAccessToken(token))
            #expect(fixture.simulator.hmsAccessTokensGranted == 1)
            #expect(fixture.simulator.counters.hmsAccessTokensGranted == 1)

            let devices = [PushSimulator.mintHMSToken(), PushSimulator.mintHMSToken()]
            #expect(devices.allSatisfy { $0.count == 130 && $0.hasPrefix("IQAAAACy") })
            let answer = try await Self.send(client, Self.message(devices, extra: #","data":"{\"k\":\"v\"}""#), token: token)
            #expect(answer.status == 200, "\(answer.json?.encodedString ?? "")")
            #expect(answer.code == "80000000")
            #expect(answer.msg == "Success")
            let requestId = try #require(answer.requestId)
            #expect(!requestId.isEmpty && requestId.allSatisfy(\.isNumber))

            let received = fixture.simulator.receivedHMSMessages
            #expect(received.map(\.token) == devices)
            #expect(received.allSatisfy { $0.clientId == Self.clientId && $0.requestId == requestId })
            #expect(received.first?.message["token"] == nil, "the record is the message without the token array")
            #expect(received.first?.message["data"]?.stringValue == #"{"k":"v"}"#)
            #expect(received.first?.message["android"]?["notification"]?["title"]?.stringValue == "Hi")
            #expect(fixture.simulator.hmsMessagesAccepted == 2)
            #expect(fixture.simulator.counters.hmsMessagesAccepted == 2)

            // validate_only: answered alike, delivered to nobody.
            let dry = try await Self.send(
                client, #"{"validate_only":true,"message":{"data":"x","token":["\#(devices[0])"]}}"#, token: token)
            #expect(dry.status == 200 && dry.code == "80000000")
            #expect(fixture.simulator.hmsMessagesAccepted == 2)

            // A topic message is recorded once, without a token; a JSON null counts as absent (pyhcm sends one).
            let topic = try await Self.send(client, #"{"message":{"data":"x","topic":"news","token":null}}"#, token: token)
            #expect(topic.status == 200 && topic.code == "80000000", "\(topic.json?.encodedString ?? "")")
            #expect(fixture.simulator.receivedHMSMessages.last?.topic == "news")
            #expect(fixture.simulator.receivedHMSMessages.last?.token == nil)
        }
    }

    @Test func eachTokenRequestFaultIsRefused400WithHuaweisOAuthError() async throws {
        try await Self.withToken { fixture, client, _ in
            let cases: [(String, Answer, Int64)] = [
                ("wrong secret", try await Self.grant(client, secret: "nope"), 20003),
                ("unknown client id", try await Self.grant(client, clientId: "999"), 20003),
                ("wrong grant_type", try await Self.grant(client, grantType: "authorization_code"), 20002),
                ("missing client_secret", try await Self.grant(client, body: "grant_type=client_credentials&client_id=\(Self.clientId)"), 20001),
                ("not a form", try await Self.grant(client, contentType: "application/json"), 20004),
            ]
            for (name, answer, subError) in cases {
                #expect(answer.status == 400, "\(name): \(answer.json?.encodedString ?? "")")
                #expect(answer.json?["error"]?.intValue == 1101, "\(name)")
                #expect(answer.json?["sub_error"]?.intValue == subError, "\(name): \(answer.json?.encodedString ?? "")")
                #expect(answer.json?["error_description"]?.stringValue?.isEmpty == false, "\(name)")
            }
            #expect(cases[0].1.json?["error_description"]?.stringValue == "parameter invalid")
            #expect(fixture.simulator.hmsAccessTokensGranted == 1)
            #expect(fixture.simulator.hmsAccessTokenRequestsRefused == cases.count)
        }
    }

    @Test func eachSendRefusalIsAnsweredWithHuaweisStatusAndCode() async throws {
        try await Self.withToken(configure: { $0.hmsApps["other-app"] = "s" }) { fixture, client, token in
            let device = PushSimulator.mintHMSToken()
            let otherGrant = try await Self.grant(client, clientId: "other-app", secret: "s")
            let othersToken = try #require(otherGrant.json?["access_token"]?.stringValue)
            func body(_ message: String) -> String { #"{"message":{\#(message),"token":["\#(device)"]}}"# }
            func notification(_ fields: String) -> String {
                body(#""android":{"notification":{"title":"t","body":"b",\#(fields)}}"#)
            }
            let ok = Self.message([device])
            let bigTokens = (0...1000).map { _ in PushSimulator.mintHMSToken() }
            let cases: [(String, Answer, Int, String?)] = [
                ("another path", try await Self.send(client, ok, token: token, path: "/v1/\(Self.clientId)/topic:subscribe"), 404, nil),
                ("GET", try await Self.send(client, ok, token: token, method: "GET"), 404, nil),
                ("no credentials", try await Self.send(client, ok, token: nil), 401, "80200001"),
                ("unknown access token", try await Self.send(client, ok, token: "forged=="), 401, "80200001"),
                ("another app's token", try await Self.send(client, ok, token: othersToken), 401, "80200001"),
                ("form content type", try await Self.send(client, ok, token: token, contentType: "text/plain"), 400, "80100003"),
                ("not JSON", try await Self.send(client, "{", token: token), 400, "80100003"),
                ("unknown top-level key", try await Self.send(client, #"{"messages":{}}"#, token: token), 400, "80100003"),
                ("validate_only a string", try await Self.send(client, #"{"validate_only":"no","message":{"topic":"t","data":"x"}}"#, token: token), 400, "80100003"),
                ("no message", try await Self.send(client, #"{"validate_only":false}"#, token: token), 400, "80100003"),
                ("two targets", try await Self.send(client, body(#""topic":"news","data":"x""#), token: token), 400, "80100003"),
                ("no target", try await Self.send(client, #"{"message":{"data":"x"}}"#, token: token), 400, "80100003"),
                ("data an object", try await Self.send(client, body(#""data":{"k":"v"}"#), token: token), 400, "80100003"),
                ("notification title a number", try await Self.send(client, body(#""notification":{"title":1,"body":"b"}"#), token: token), 400, "80100003"),
                ("notification image http", try await Self.send(client, body(#""notification":{"title":"t","body":"b","image":"http://x/y.png"}"#), token: token), 400, "80100003"),
                ("urgency", try await Self.send(client, body(#""data":"x","android":{"urgency":"URGENT"}"#), token: token), 400, "80100003"),
                ("collapse_key 101", try await Self.send(client, body(#""data":"x","android":{"collapse_key":101}"#), token: token), 400, "80100003"),
                ("ttl without s", try await Self.send(client, body(#""data":"x","android":{"ttl":"3600"}"#), token: token), 400, "80100003"),
                ("ttl ten decimals", try await Self.send(client, body(#""data":"x","android":{"ttl":"1.0123456789s"}"#), token: token), 400, "80100003"),
                ("fast_app_target 3", try await Self.send(client, body(#""data":"x","android":{"fast_app_target":3}"#), token: token), 400, "80100003"),
                ("unknown android key", try await Self.send(client, body(#""data":"x","android":{"priority":"HIGH"}"#), token: token), 400, "80100003"),
                ("no click_action", try await Self.send(client, body(#""android":{"notification":{"title":"t","body":"b"}}"#), token: token), 400, "80100003"),
                ("click_action type 5", try await Self.send(client, notification(#""click_action":{"type":5}"#), token: token), 400, "80100003"),
                ("type 1 without intent", try await Self.send(client, notification(#""click_action":{"type":1}"#), token: token), 400, "80100003"),
                ("type 2 http url", try await Self.send(client, notification(#""click_action":{"type":2,"url":"http://x.y"}"#), token: token), 400, "80100003"),
                ("unknown click_action key", try await Self.send(client, notification(#""click_action":{"type":3,"uri":"x"}"#), token: token), 400, "80100003"),
                ("badge without class", try await Self.send(client, notification(#""click_action":{"type":3},"badge":{"add_num":1}"#), token: token), 400, "80100003"),
                ("badge add_num 100", try await Self.send(client, notification(#""click_action":{"type":3},"badge":{"add_num":100,"class":"a.B"}"#), token: token), 400, "80100003"),
                ("badge set_num -1", try await Self.send(client, notification(#""click_action":{"type":3},"badge":{"set_num":-1,"class":"a.B"}"#), token: token), 400, "80100003"),
                ("unknown badge key", try await Self.send(client, notification(#""click_action":{"type":3},"badge":{"class":"a.B","num":1}"#), token: token), 400, "80100003"),
                ("color red", try await Self.send(client, notification(#""click_action":{"type":3},"color":"red""#), token: token), 400, "80100003"),
                ("importance URGENT", try await Self.send(client, notification(#""click_action":{"type":3},"importance":"URGENT""#), token: token), 400, "80100003"),
                ("notify_id a string", try await Self.send(client, notification(#""click_action":{"type":3},"notify_id":"1""#), token: token), 400, "80100003"),
                ("title_loc_args numbers", try await Self.send(client, notification(#""click_action":{"type":3},"title_loc_args":[1]"#), token: token), 400, "80100003"),
                ("unknown android.notification key", try await Self.send(client, notification(#""click_action":{"type":3},"subtitle":"x""#), token: token), 400, "80100003"),
                ("no title", try await Self.send(client, body(#""android":{"notification":{"body":"b","click_action":{"type":3}}}"#), token: token), 400, "80100003"),
                ("token a string", try await Self.send(client, #"{"message":{"data":"x","token":"\#(device)"}}"#, token: token), 400, "80300010"),
                ("no tokens", try await Self.send(client, #"{"message":{"data":"x","token":[]}}"#, token: token), 400, "80300010"),
                ("1001 tokens", try await Self.send(client, Self.message(bigTokens), token: token), 400, "80300010"),
                ("message over 4096 bytes", try await Self.send(client, body(#""data":"\#(String(repeating: "x", count: 4100))""#), token: token), 400, "80300008"),
                ("malformed token", try await Self.send(client, Self.message(["short"]), token: token), 400, "80300007"),
            ]
            for (name, answer, status, code) in cases {
                #expect(answer.status == status, "\(name): \(answer.json?.encodedString ?? "no JSON")")
                #expect(answer.code == code, "\(name): \(answer.json?.encodedString ?? "no JSON")")
                #expect(answer.msg?.isEmpty == false, "\(name)")
                #expect(answer.requestId?.allSatisfy(\.isNumber) == true, "\(name)")
            }
            let illegal = try #require(cases.first { $0.0 == "urgency" }?.1.msg)
            #expect(illegal.hasPrefix("Illegal payload, ") && illegal.contains("android.urgency"), "\(illegal)")
            #expect(cases.first { $0.0 == "no credentials" }?.1.msg == "Oauth authentication error")
            #expect(cases.first { $0.0 == "malformed token" }?.1.msg == "All the tokens are invalid")
            #expect(fixture.simulator.hmsMessagesAccepted == 0)

            // The 4096 bytes are the message's: 1000 tokens around a small message are accepted.
            let thousand = try await Self.send(client, Self.message(Array(bigTokens.prefix(1000))), token: token)
            #expect(thousand.status == 200 && thousand.code == "80000000", "\(thousand.json?.encodedString ?? "")")
            #expect(fixture.simulator.hmsMessagesAccepted == 1000)
            // Documented fields the simulator does not check deeply are not refused as unknown.
            let documented = try await Self.send(client, notification(
                #""click_action":{"type":1,"intent":"intent://x"},"badge":{"add_num":1,"class":"a.B"},"use_default_vibrate":true,"#
                    + ##""use_default_light":true,"foreground_show":false,"visibility":"PUBLIC","importance":"NORMAL","color":"#AACCDD""##),
                token: token)
            #expect(documented.status == 200, "\(documented.json?.encodedString ?? "")")
        }
    }

    @Test func someInvalidTokensAreAPartialSuccessWhoseMsgNamesThem() async throws {
        try await Self.withToken { fixture, client, token in
            let good = PushSimulator.mintHMSToken(), gone = PushSimulator.mintHMSToken()
            fixture.simulator.invalidateHMSToken(gone)
            let answer = try await Self.send(client, Self.message([good, gone, "bad token!"]), token: token)
            #expect(answer.status == 200, "\(answer.json?.encodedString ?? "")")
            #expect(answer.code == "80100000")
            let detail = try JSONValue(parsing: Array(try #require(answer.msg).utf8))
            #expect(detail["success"]?.intValue == 1)
            #expect(detail["failure"]?.intValue == 2)
            #expect(detail["illegal_tokens"]?.arrayValue?.compactMap(\.stringValue) == [gone, "bad token!"])
            #expect(fixture.simulator.receivedHMSMessages.map(\.token) == [good])

            let allGone = try await Self.send(client, Self.message([gone]), token: token)
            #expect(allGone.status == 400 && allGone.code == "80300007", "\(allGone.json?.encodedString ?? "")")
        }
    }

    @Test func aTokenPastItsLifetimeIsAnswered401TokenExpired() async throws {
        let clock = ManualClock(1_800_000_000_000)
        try await Self.withToken(clock: clock, configure: { $0.hmsAccessTokenLifetime = 60 }) { fixture, client, token in
            let device = PushSimulator.mintHMSToken()
            clock.now += 59_000
            let fresh = try await Self.send(client, Self.message([device]), token: token)
            #expect(fresh.status == 200)
            clock.now += 1_000
            #expect(!fixture.simulator.isValidHMSAccessToken(token))
            let late = try await Self.send(client, Self.message([device]), token: token)
            #expect(late.status == 401, "\(late.json?.encodedString ?? "")")
            #expect(late.code == "80200003")
            #expect(late.msg == "Oauth Token expired.")
        }
    }

    @Test func expireHMSAccessTokensExpiresEveryTokenGrantedSoFarButNotLaterOnes() async throws {
        try await Self.withToken { fixture, client, token in
            let device = PushSimulator.mintHMSToken()
            #expect(try await Self.send(client, Self.message([device]), token: token).code == "80000000")
            fixture.simulator.expireHMSAccessTokens()
            let expired = try await Self.send(client, Self.message([device]), token: token)
            #expect(expired.status == 401 && expired.code == "80200003", "\(expired.json?.encodedString ?? "")")
            let renewed = try #require(try await Self.grant(client).json?["access_token"]?.stringValue)
            #expect(try await Self.send(client, Self.message([device]), token: renewed).code == "80000000")
            #expect(fixture.simulator.hmsAccessTokensGranted == 2)
        }
    }

    @Test func theFlowControlFaultAnswers503AfterTheCredentials() async throws {
        try await Self.withToken { fixture, client, token in
            var faults = fixture.simulator.faults
            faults.hmsFlowControlFraction = 1
            fixture.simulator.faults = faults
            let device = PushSimulator.mintHMSToken()
            let answer = try await Self.send(client, Self.message([device]), token: token)
            #expect(answer.status == 503, "\(answer.json?.encodedString ?? "")")
            #expect(answer.msg?.contains("Traffic control") == true)
            #expect(try await Self.send(client, Self.message([device]), token: nil).status == 401)
            #expect(fixture.simulator.hmsMessagesAccepted == 0)
        }
    }

    @Test func fcmPathsStillGoToFCMAndOtherV1PathsToHuawei() async throws {
        try await Self.withToken { _, client, _ in
            let fcm = try await Self.send(client, "{}", token: nil, path: "/v1/projects/p/messages:send")
            #expect(fcm.status == 401)
            #expect(fcm.json?["error"]?["status"]?.stringValue == "UNAUTHENTICATED")
            let hms = try await Self.send(client, "{}", token: nil, path: "/v1/p/messages:send")
            #expect(hms.status == 401 && hms.code == "80200001")
        }
    }

    @Test func theRecordFileGetsOneHMSLinePerTokenAndOneLinePerGrant() async throws {
        let directory = try TemporaryDirectories.make("hms-record")
        let file = directory + "/record.jsonl"
        let devices = [PushSimulator.mintHMSToken(), PushSimulator.mintHMSToken()]
        try await Self.withToken(configure: { $0.recordFile = file }) { fixture, client, token in
            #expect(try await Self.send(client, Self.message(devices), token: token).code == "80000000")
            try await fixture.simulator.stop()
        }
        let lines = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n")
            .map { try JSONValue(parsing: Array($0.utf8)) }
        #expect(lines.count == 3)
        #expect(lines.first?["service"]?.stringValue == "hms-oauth")
        #expect(lines.first?["clientId"]?.stringValue == Self.clientId)
        #expect(lines.first?["expiresIn"]?.intValue == 3600)
        let messages = lines.filter { $0["service"]?.stringValue == "hms" }
        #expect(messages.compactMap { $0["token"]?.stringValue } == devices)
        #expect(messages.allSatisfy { $0["clientId"]?.stringValue == Self.clientId && $0["message"]?["token"] == nil })
    }
}
