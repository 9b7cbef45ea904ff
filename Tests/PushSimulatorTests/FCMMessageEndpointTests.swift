import PushSimulator
import Foundation
import PushCore
import PushSender
import TestSupport
import Testing

/// The simulator's FCM HTTP v1 endpoint over real HTTP/2 + TLS: an access token from its own token endpoint sends a
/// valid message (recorded); each rule FCM enforces is refused with FCM's status, canonical code, FcmError code and
/// the field at fault; and PushCore's FCMAnswerRule reads each answer as the verdict the issue wants.
@Suite(.timeLimit(.minutes(2)))
struct FCMMessageEndpointTests {
    struct Answer {
        var status: Int?
        var json: JSONValue?
        var retryAfter: String?
        var body: [UInt8]
        var canonical: String? { json?["error"]?["status"]?.stringValue }
        var error: FCMError { FCMError(body: body) }
        var verdict: AnswerVerdict.Kind { FCMAnswerRule.verdict(status: status ?? 0, body: body).kind }
    }

    /// A simulator trusting a development account (project `pushprovider-dev`), a client and an access token.
    static func withToken(
        clock: ManualClock? = nil, configure: @escaping (inout SimulatorConfiguration) -> Void = { _ in },
        _ body: (SimulatorFixture, H2TestClient, String) async throws -> Void
    ) async throws {
        try await SimulatorFixture.run(.either, configure: {
            if let clock { $0.clock = { clock.now } }
            configure(&$0)
        }) { fixture in
            let (account, json) = try await offThePool { try SimulatorServiceAccount.makeDevelopment(tokenURI: fixture.simulator.tokenURI) }
            try fixture.simulator.trustServiceAccount(account)
            let sender = try FCMServiceAccount(json: Array(json.utf8), source: "dev.json")
            let issued = Date(timeIntervalSince1970: Double(clock?.now ?? Int64(Date().timeIntervalSince1970 * 1000)) / 1000)
            let client = try await fixture.connect()
            let grant = try await client.send(.init(
                method: "POST", path: "/token", headers: [("content-type", "application/x-www-form-urlencoded")],
                body: Array(try sender.grantRequestBody(issuedAt: issued).utf8)))
            let token = try #require(try JSONValue(parsing: grant.body)["access_token"]?.stringValue)
            do {
                try await body(fixture, client, token)
            } catch {
                await client.close()
                throw error
            }
            await client.close()
        }
    }

    static func send(
        _ client: H2TestClient, _ message: String, token: String?, project: String = "pushprovider-dev"
    ) async throws -> Answer {
        var headers = [("content-type", "application/json")]
        if let token { headers.append(("authorization", "Bearer \(token)")) }
        let response = try await client.send(.init(
            method: "POST", path: "/v1/projects/\(project)/messages:send", headers: headers, body: Array(message.utf8)))
        return Answer(status: response.status, json: try? JSONValue(parsing: response.body), retryAfter: response.header("retry-after"), body: response.body)
    }

    @Test func aValidMessageIsAcceptedAndRecorded() async throws {
        try await Self.withToken { fixture, client, token in
            let device = PushSimulator.mintFCMToken()
            let message = #"{"message":{"token":"\#(device)","notification":{"title":"Hi","body":"there"},"data":{"k":"v","n":"1"},"android":{"priority":"HIGH","ttl":"3600s","collapse_key":"c"}}}"#
            let answer = try await Self.send(client, message, token: token)
            #expect(answer.status == 200, "\(answer.json?.encodedString ?? "")")
            let name = try #require(answer.json?["name"]?.stringValue)
            #expect(name.hasPrefix("projects/pushprovider-dev/messages/"))
            #expect(answer.verdict == .accepted)
            let received = fixture.simulator.receivedFCMMessages
            #expect(received.count == 1)
            #expect(received.first?.token == device)
            #expect(received.first?.message["data"]?["k"]?.stringValue == "v")
            #expect(received.first.map { name.hasSuffix($0.messageId) } == true)
            // validate_only: answered, not delivered.
            let dry = try await Self.send(client, #"{"validate_only":true,"message":{"topic":"news"}}"#, token: token)
            #expect(dry.status == 200)
            #expect(fixture.simulator.fcmMessagesAccepted == 1)
        }
    }

    @Test func eachRuleIsRefusedAsFCMRefusesIt() async throws {
        try await Self.withToken { fixture, client, token in
            let device = PushSimulator.mintFCMToken()
            let gone = PushSimulator.mintFCMToken()
            fixture.simulator.unregisterFCMToken(gone)
            let cases: [(String, String, String?, Int, String, String?, String?, AnswerVerdict.Kind)] = [
                // name, message, access token, status, canonical, FcmError code, field, verdict
                ("no credentials", #"{"message":{"token":"\#(device)"}}"#, nil, 401, "UNAUTHENTICATED", nil, nil, .credentialFailure),
                ("unknown token", #"{"message":{"token":"\#(device)"}}"#, "ya29.forged", 401, "UNAUTHENTICATED", nil, nil, .credentialFailure),
                ("two targets", #"{"message":{"token":"\#(device)","topic":"news"}}"#, token, 400, "INVALID_ARGUMENT", "INVALID_ARGUMENT", "message", .permanent),
                ("no target", #"{"message":{"data":{"a":"b"}}}"#, token, 400, "INVALID_ARGUMENT", "INVALID_ARGUMENT", nil, .permanent),
                ("number in data", #"{"message":{"topic":"news","data":{"a":"b","n":1}}}"#, token, 400, "INVALID_ARGUMENT", "INVALID_ARGUMENT", "message.data[1].value", .permanent),
                ("reserved data key", #"{"message":{"topic":"news","data":{"from":"x"}}}"#, token, 400, "INVALID_ARGUMENT", "INVALID_ARGUMENT", "message.data", .permanent),
                ("priority", #"{"message":{"topic":"news","android":{"priority":"urgent"}}}"#, token, 400, "INVALID_ARGUMENT", "INVALID_ARGUMENT", "message.android.priority", .permanent),
                ("ttl without s", #"{"message":{"topic":"news","android":{"ttl":"3600"}}}"#, token, 400, "INVALID_ARGUMENT", "INVALID_ARGUMENT", "message.android.ttl", .permanent),
                ("unknown android field", #"{"message":{"topic":"news","android":{"sound":"x"}}}"#, token, 400, "INVALID_ARGUMENT", "INVALID_ARGUMENT", "message.android", .permanent),
                ("unknown android.notification field", #"{"message":{"topic":"news","android":{"notification":{"badge":1}}}}"#, token, 400, "INVALID_ARGUMENT", "INVALID_ARGUMENT", "message.android.notification", .permanent),
                ("android.notification number as text", #"{"message":{"topic":"news","android":{"notification":{"channel_id":7}}}}"#, token, 400, "INVALID_ARGUMENT", "INVALID_ARGUMENT", "message.android.notification.channel_id", .permanent),
                ("negative notification_count", #"{"message":{"topic":"news","android":{"notification":{"notification_count":-1}}}}"#, token, 400, "INVALID_ARGUMENT", "INVALID_ARGUMENT", "message.android.notification.notification_count", .permanent),
                ("unknown field", #"{"message":{"topic":"news","priority":"high"}}"#, token, 400, "INVALID_ARGUMENT", "INVALID_ARGUMENT", "message", .permanent),
                ("too big", #"{"message":{"topic":"news","data":{"a":"\#(String(repeating: "x", count: 4100))"}}}"#, token, 400, "INVALID_ARGUMENT", "INVALID_ARGUMENT", "message", .permanent),
                ("malformed token", #"{"message":{"token":"not a token"}}"#, token, 400, "INVALID_ARGUMENT", "INVALID_ARGUMENT", "message.token", .tokenDead),
                ("unregistered", #"{"message":{"token":"\#(gone)"}}"#, token, 404, "NOT_FOUND", "UNREGISTERED", nil, .tokenDead),
            ]
            for (name, message, accessToken, status, canonical, code, field, verdict) in cases {
                let answer = try await Self.send(client, message, token: accessToken)
                #expect(answer.status == status, "\(name): \(answer.json?.encodedString ?? "")")
                #expect(answer.canonical == canonical, "\(name)")
                #expect(answer.error.errorCode == code, "\(name)")
                if let field { #expect(answer.error.fieldViolations.contains(field), "\(name): \(answer.error.fieldViolations)") }
                #expect(answer.verdict == verdict, "\(name)")
            }
            let otherProject = try await Self.send(client, #"{"message":{"topic":"news"}}"#, token: token, project: "someone-else")
            #expect(otherProject.status == 403 && otherProject.canonical == "PERMISSION_DENIED")
            #expect(fixture.simulator.receivedFCMMessages.isEmpty)
        }
    }

    @Test func theRecordFileHoldsEachAcceptedMessageAndGrantAndConfiguredTokensAreUnregisteredFromTheStart() async throws {
        let record = FileManager.default.temporaryDirectory.appendingPathComponent("fcm-record-\(UUID().uuidString).jsonl").path
        defer { try? FileManager.default.removeItem(atPath: record) }
        let uninstalled = PushSimulator.mintFCMToken()
        try await Self.withToken(configure: {
            $0.recordFile = record
            $0.fcmUnregisteredTokens = [uninstalled]
        }) { fixture, client, token in
            let device = PushSimulator.mintFCMToken()
            let ok = try await Self.send(client, #"{"message":{"token":"\#(device)","notification":{"body":"hi"}}}"#, token: token)
            #expect(ok.status == 200)
            let gone = try await Self.send(client, #"{"message":{"token":"\#(uninstalled)"}}"#, token: token)
            #expect(gone.status == 404 && gone.error.errorCode == "UNREGISTERED")
            try await fixture.simulator.stop()
        }
        let lines = try String(contentsOfFile: record, encoding: .utf8).split(separator: "\n").map { try JSONValue(parsing: String($0)) }
        // One grant (the fixture's), one accepted message; the refused send is counted, not recorded.
        #expect(lines.map { $0["service"]?.stringValue } == ["oauth", "fcm"], "\(lines)")
        #expect(lines.first?["clientEmail"]?.stringValue?.hasSuffix(".iam.gserviceaccount.com") == true)
        #expect(lines.last?["message"]?["notification"]?["body"]?.stringValue == "hi")
        #expect(lines.last?["project"]?.stringValue == "pushprovider-dev")
    }

    @Test func aTokenRegisteredToAnotherProjectAnswersSenderIdMismatchAndIsNotRecorded() async throws {
        let foreign = PushSimulator.mintFCMToken()
        try await Self.withToken(configure: { $0.fcmForeignTokens = [foreign] }) { fixture, client, token in
            let mismatch = try await Self.send(client, #"{"message":{"token":"\#(foreign)","notification":{"body":"hi"}}}"#, token: token)
            #expect(mismatch.status == 403 && mismatch.canonical == "PERMISSION_DENIED")
            #expect(mismatch.error.errorCode == "SENDER_ID_MISMATCH")
            #expect(mismatch.verdict == .tokenDead)
            let other = PushSimulator.mintFCMToken()
            #expect(try await Self.send(client, #"{"message":{"token":"\#(other)"}}"#, token: token).status == 200)
            #expect(fixture.simulator.receivedFCMMessages.map(\.token) == [other])
        }
    }

    @Test func anExpiredAccessTokenIsUnauthenticatedAndFaultsCarryRetryAfter() async throws {
        let clock = ManualClock(Int64(Date().timeIntervalSince1970 * 1000))
        try await Self.withToken(clock: clock, configure: { $0.accessTokenLifetime = 60 }) { fixture, client, token in
            let message = #"{"message":{"topic":"news"}}"#
            #expect(try await Self.send(client, message, token: token).status == 200)
            fixture.simulator.faults = SimulatorFaults(tooManyRequestsFraction: 1)
            let quota = try await Self.send(client, message, token: token)
            #expect(quota.status == 429 && quota.error.errorCode == "QUOTA_EXCEEDED" && quota.retryAfter == "1")
            #expect(quota.verdict == .retryable)
            fixture.simulator.faults = SimulatorFaults(serviceUnavailableFraction: 1)
            let down = try await Self.send(client, message, token: token)
            #expect(down.status == 503 && down.error.errorCode == "UNAVAILABLE" && down.retryAfter == "1")
            fixture.simulator.faults = SimulatorFaults()
            clock.now += 60_000
            let expired = try await Self.send(client, message, token: token)
            #expect(expired.status == 401 && expired.canonical == "UNAUTHENTICATED")
            #expect(fixture.simulator.fcmMessagesAccepted == 1)
        }
    }
}
