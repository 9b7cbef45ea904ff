import PushSimulator
import Foundation
import PushCore
import PushSender
import TestSupport
import Testing

/// The simulator's Push Kit scenario API for HarmonyOS over real HTTP/2 + TLS: a message with a JWT of a trusted
/// service account is accepted and recorded with its push-type; every refusal — the JWT (no bearer, another key,
/// another project, expired), the push-type, the category, title and body, the 4096-byte limit, the token count —
/// gets Huawei's status and code; invalid tokens are named in `msg` by reason.
@Suite(.timeLimit(.minutes(2)))
struct HarmonyOSEndpointTests {
    static let projectId = "101234567890"

    struct Answer {
        var status: Int?
        var json: JSONValue?
        var code: String? { json?["code"]?.stringValue }
        var msg: String? { json?["msg"]?.stringValue }
    }

    static func account(projectId: String = projectId) throws -> (signer: HarmonyOSServiceAccount, trusted: SimulatorHarmonyOSAccount) {
        let json = Array(try SimulatorHarmonyOSAccount.makeDevelopment(projectId: projectId).utf8)
        return (try HarmonyOSServiceAccount(json: json, source: "key"), try SimulatorHarmonyOSAccount(keyFileJSON: json, source: "key"))
    }

    static func alert(_ tokens: [String], category: String? = "IM", title: String? = "Ann", extra: String = "") -> String {
        var fields: [String] = []
        if let category { fields.append(#""category":"\#(category)""#) }
        if let title { fields.append(#""title":"\#(title)""#) }
        fields.append(#""body":"hi","clickAction":{"actionType":0}"#)
        let list = tokens.map { "\"\($0)\"" }.joined(separator: ",")
        return #"{"payload":{"notification":{\#(fields.joined(separator: ","))\#(extra)}},"target":{"token":[\#(list)]}}"#
    }

    static func send(
        _ client: H2TestClient, _ body: String, jwt: String?, pushType: String? = "0", projectId: String = projectId
    ) async throws -> Answer {
        var headers = [("content-type", "application/json")]
        if let jwt { headers.append(("authorization", "Bearer \(jwt)")) }
        if let pushType { headers.append(("push-type", pushType)) }
        let response = try await client.send(.init(
            method: "POST", path: "/v3/\(projectId)/messages:send", headers: headers, body: Array(body.utf8)))
        return Answer(status: response.status, json: try? JSONValue(parsing: response.body))
    }

    @Test func aSignedAlertIsAcceptedAndRecordedAndEveryRefusalHasHuaweisCode() async throws {
        let (signer, trusted) = try Self.account()
        let (stranger, _) = try Self.account()
        let (otherProject, otherTrusted) = try Self.account(projectId: "999")
        try await SimulatorFixture.run(.either, configure: { $0.harmonyosAccounts = [trusted, otherTrusted] }) { fixture in
            let client = try await fixture.connect()
            let jwt = try signer.jwt(issuedAt: Date())
            let token = PushSimulator.mintHarmonyOSToken()

            let ok = try await Self.send(client, Self.alert([token]), jwt: jwt)
            #expect(ok.status == 200 && ok.code == "80000000", "\(ok.json?.encodedString ?? "")")
            let received = try #require(fixture.simulator.receivedHarmonyOSMessages.first)
            #expect(received.token == token && received.pushType == 0 && received.projectId == Self.projectId)
            #expect(received.message["payload"]?["notification"]?["category"]?.stringValue == "IM" && received.message["target"] == nil)

            let background = try await Self.send(client, #"{"payload":{"extraData":"{}"},"target":{"token":["\#(token)"]}}"#, jwt: jwt, pushType: "6")
            #expect(background.status == 200 && fixture.simulator.receivedHarmonyOSMessages.last?.pushType == 6)

            let refusals: [(Answer, Int, String, String)] = [
                (try await Self.send(client, Self.alert([token]), jwt: nil), 401, "80200001", "no Bearer"),
                (try await Self.send(client, Self.alert([token]), jwt: try stranger.jwt(issuedAt: Date())), 401, "80200001", "iss"),
                (try await Self.send(client, Self.alert([token]), jwt: try otherProject.jwt(issuedAt: Date())), 401, "80200001", "project"),
                (try await Self.send(client, Self.alert([token]), jwt: try signer.jwt(issuedAt: Date().addingTimeInterval(-7200))), 401, "80200003", "expired"),
                (try await Self.send(client, Self.alert([token]), jwt: jwt, pushType: nil), 400, "80100001", "push-type"),
                (try await Self.send(client, Self.alert([token]), jwt: jwt, pushType: "7"), 400, "80100001", "push-type 7"),
                (try await Self.send(client, Self.alert([token], category: nil), jwt: jwt), 400, "80100003", "category is required"),
                (try await Self.send(client, Self.alert([token], category: "NEWS"), jwt: jwt), 400, "80100003", "'NEWS'"),
                (try await Self.send(client, Self.alert([token], title: nil), jwt: jwt), 400, "80100003", "title"),
                (try await Self.send(client, #"{"payload":{"notification":{}},"target":{"token":["\#(token)"]}}"#, jwt: jwt, pushType: "6"), 400, "80100003", "extraData"),
                (try await Self.send(client, Self.alert([token], extra: #","image":"https://x.example/\#(String(repeating: "a", count: 4100))""#), jwt: jwt), 400, "80300008", "4096"),
                (try await Self.send(client, Self.alert([]), jwt: jwt), 400, "80300010", "1-1000"),
            ]
            for (answer, status, code, words) in refusals {
                #expect(answer.status == status && answer.code == code, "\(words): \(answer.json?.encodedString ?? "")")
                #expect(answer.msg?.contains(words) == true, "\(words): \(answer.msg ?? "")")
            }

            let gone = PushSimulator.mintHarmonyOSToken()
            fixture.simulator.invalidateHarmonyOSToken(gone)
            let dead = try await Self.send(client, Self.alert([gone]), jwt: jwt)
            #expect(dead.status == 400 && dead.code == "80300007", "\(dead.json?.encodedString ?? "")")
            let inner = try JSONValue(parsing: Array((dead.msg ?? "").utf8))
            #expect(inner["illegalTokens"]?["noRight"]?.arrayValue?.first?.stringValue == gone)
            let partial = try await Self.send(client, Self.alert([token, gone, "bad token"]), jwt: jwt)
            #expect(partial.status == 200 && partial.code == "80100000", "\(partial.json?.encodedString ?? "")")
            let detail = try JSONValue(parsing: Array((partial.msg ?? "").utf8))
            #expect(detail["success"]?.intValue == 1 && detail["failure"]?.intValue == 2)
            #expect(detail["illegalTokens"]?["tokenFormatError"]?.arrayValue?.first?.stringValue == "bad token")
            // A JWT the simulator refused once it expired them all is answered 80200003; a fresh one is accepted.
            fixture.simulator.expireHarmonyOSTokens()
            #expect(try await Self.send(client, Self.alert([token]), jwt: jwt).code == "80200003")
            #expect(try await Self.send(client, Self.alert([token]), jwt: try signer.jwt(issuedAt: Date())).code == "80000000")
            await client.close()
        }
    }
}
