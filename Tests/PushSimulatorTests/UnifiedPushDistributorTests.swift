import PushSimulator
import Crypto
import Foundation
import PushCore
import PushSender
import TestSupport
import Testing

/// The simulator's UnifiedPush distributor (SERV_1.2.0 push server, AND_3.0.0 distributor) on real sockets: endpoints
/// registered over the wire and by the mint script, discovery answered exactly, pushes encrypted by our own
/// ``WebPushEncryption`` (HTTP/2) and by PyPI's pywebpush (HTTP/1.1, Tests/webpush/sim_pywebpush.py) accepted with
/// 201 and `TTL: 0` and recorded decrypted, each broken rule refused, and the faults applied.
@Suite struct UnifiedPushDistributorTests {
    typealias Answer = SimulatorWebPushRefereeTests.Answer

    /// A push to `endpoint` over HTTP/2: `text` encrypted for its keys (RFC 8291), with `headers`.
    static func push(
        _ endpoint: MintedSubscription, _ text: String, headers: [(String, String)] = [("content-encoding", "aes128gcm")]
    ) throws -> H2TestClient.Request {
        let keys = try WebPushEncryption.RecipientKeys(
            p256dh: try #require(StrictBase64URL.decode(endpoint.p256dh)), auth: try #require(StrictBase64URL.decode(endpoint.auth)))
        return H2TestClient.Request(
            path: "/up/" + endpoint.id, headers: headers, body: try WebPushEncryption.encrypt(Array(text.utf8), for: keys))
    }

    static func json(_ response: H2TestClient.Response) throws -> JSONValue { try JSONValue(parsing: response.body) }

    @Test func registerAnswersWhatAConnectorLibraryGivesTheApp() async throws {
        try await SimulatorFixture.run(.either) { fixture in
            let client = try await fixture.connect()
            let vapid = Array(P256.Signing.PrivateKey().publicKey.x963Representation)
            let made = try await client.send(.init(
                path: "/up/register", body: Array(#"{"vapid":"\#(StrictBase64URL.encode(vapid))"}"#.utf8)))
            #expect(made.status == 201, "\(String(decoding: made.body, as: UTF8.self))")
            #expect(made.header("content-type") == "application/json")
            let minted = try Self.json(made)
            // Exactly the endpoint and its keys, on the origin the request named (the test client's :authority).
            #expect(minted.objectPairs?.map(\.0) == ["endpoint", "keys"])
            #expect(minted["keys"]?.objectPairs?.map(\.0) == ["p256dh", "auth"])
            let endpoint = try #require(minted["endpoint"]?.stringValue)
            #expect(endpoint.hasPrefix("https://localhost/up/"), "\(endpoint)")
            let id = String(endpoint.dropFirst("https://localhost/up/".count))
            #expect(StrictBase64URL.decode(id)?.count == 20)  // SERV_1.2.0: 160 random bits
            #expect(minted["keys"]?["p256dh"]?.stringValue.flatMap(StrictBase64URL.decode)?.count == 65)
            #expect(minted["keys"]?["auth"]?.stringValue.flatMap(StrictBase64URL.decode)?.count == 16)
            #expect(made.header("location") == endpoint)
            let registered = fixture.simulator.unifiedPushEndpoints
            #expect(registered.map(\.id) == [id])
            #expect(registered.first?.applicationServerKey == StrictBase64URL.encode(vapid))
            // Not a browser's subscription.
            #expect(fixture.simulator.webPushSubscriptions.isEmpty)

            let unrestricted = try await client.send(.init(path: "/up/register", body: []))
            #expect(unrestricted.status == 201)
            let bad = try await client.send(.init(path: "/up/register", body: Array(#"{"vapid":"nope"}"#.utf8)))
            #expect(bad.status == 400)
            #expect(reasonOf(bad) == "BadSubscribeRequest")
            let get = try await client.send(.init(method: "GET", path: "/up/register", body: []))
            #expect(get.status == 405)
            await client.close()
        }
    }

    @Test func discoveryAnswersExactlyForARegisteredIdGoneOrNotAndAnUnknownIdIs404() async throws {
        try await SimulatorFixture.run(.either) { fixture in
            let client = try await fixture.connect()
            let endpoint = fixture.simulator.registerUnifiedPushEndpoint()
            let discovery = H2TestClient.Request(method: "GET", path: "/up/" + endpoint.id, body: [])
            let found = try await client.send(discovery)
            #expect(found.status == 200)
            #expect(found.header("content-type") == "application/json")
            #expect(String(decoding: found.body, as: UTF8.self) == #"{"unifiedpush":{"version":1}}"#)

            let deleted = try await client.send(.init(method: "DELETE", path: "/up/" + endpoint.id, body: []))
            #expect(deleted.status == 204)
            let afterDelete = try await client.send(discovery)
            #expect(afterDelete.status == 200)
            #expect(String(decoding: afterDelete.body, as: UTF8.self) == #"{"unifiedpush":{"version":1}}"#)

            let unknown = try await client.send(.init(method: "GET", path: "/up/AAAAAAAAAAAAAAAAAAAAAAAAAAA", body: []))
            #expect(unknown.status == 404)
            #expect(unknown.header("content-type") == "application/json")
            #expect(reasonOf(unknown) == "NotFound")
            // A browser's subscription is no UnifiedPush endpoint, and an endpoint no browser's subscription.
            let subscription = fixture.simulator.mintWebPushSubscription()
            let crossed = try await client.send(.init(method: "GET", path: "/up/" + subscription.id, body: []))
            #expect(crossed.status == 404)
            let other = fixture.simulator.registerUnifiedPushEndpoint()
            let asWebPush = try await client.send(.init(path: "/wp/" + other.id, headers: [("ttl", "0")], body: []))
            #expect(asWebPush.status == 404)
            let unknownDelete = try await client.send(.init(method: "DELETE", path: "/up/" + subscription.id, body: []))
            #expect(unknownDelete.status == 404)
            await client.close()
        }
    }

    @Test func aPushEncryptedByOurSenderIsAcceptedOverHTTP2WithTTL0AndRecorded() async throws {
        let recordFile = try TemporaryDirectories.make("unifiedpush-record") + "/record.jsonl"
        try await SimulatorFixture.run(.either, configure: { $0.recordFile = recordFile }) { fixture in
            let client = try await fixture.connect()
            let endpoint = fixture.simulator.registerUnifiedPushEndpoint()
            let text = #"{"title":"Hello","body":"over UnifiedPush — ünïcode"}"#
            // No TTL and no Authorization: SERV_1.2.0 asks for neither.
            let answer = try await client.send(try Self.push(endpoint, text))
            #expect(answer.status == 201, "\(String(decoding: answer.body, as: UTF8.self))")
            #expect(answer.header("ttl") == "0")
            let location = answer.header("location") ?? ""
            #expect(location.hasPrefix("https://127.0.0.1:\(fixture.port)/m/"), "\(location)")
            let received = fixture.simulator.receivedUnifiedPushes
            #expect(received.map(\.subscriptionId) == [endpoint.id])
            #expect(received.first?.text == text)
            #expect(received.first?.ttl == nil)
            #expect(received.first?.vapidKey == nil)
            #expect(fixture.simulator.counters.unifiedPushesAccepted == 1)
            #expect(fixture.simulator.receivedWebPushes.isEmpty)
            await client.close()
        }
        let lines = try String(contentsOfFile: recordFile, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 1)
        let line = try JSONValue(parsing: Array(try #require(lines.first).utf8))
        #expect(line["service"]?.stringValue == "unifiedpush")
        #expect(line["subscription"]?.stringValue?.count == 27)
        #expect(line["plaintext"]?.stringValue == #"{"title":"Hello","body":"over UnifiedPush — ünïcode"}"#)
        #expect(line["ttl"] == .null)
        #expect(line["vapidKey"] == .null)
    }

    @Test func pywebpushPushesAreAcceptedWithTTL0AndRecordedWithTheirPlaintext() async throws {
        let recordFile = try TemporaryDirectories.make("unifiedpush-record") + "/record.jsonl"
        try await SimulatorWebPushRefereeTests.referee(configure: { $0.recordFile = recordFile }) { simulator, key in
            [("restricted", "valid", simulator.registerUnifiedPushEndpoint(vapid: key), #"{"n":1,"text":"ünïcode"}"#),
             ("anonymous", "no-vapid", simulator.registerUnifiedPushEndpoint(), "no VAPID at all"),
             ("no-ttl", "no-ttl", simulator.registerUnifiedPushEndpoint(vapid: key), "no TTL header")]
        } check: { simulator, answers in
            for name in ["restricted", "anonymous", "no-ttl"] {
                #expect(answers[name]?.status == 201, "\(name): \(answers[name]?.body ?? "")")
                #expect(answers[name]?.headers["ttl"] == "0", "\(name)")
                #expect(answers[name]?.headers["location"]?.hasPrefix("https://127.0.0.1:\(simulator.port ?? 0)/m/") == true)
            }
            let received = simulator.receivedUnifiedPushes
            #expect(Set(received.compactMap(\.text)) == [#"{"n":1,"text":"ünïcode"}"#, "no VAPID at all", "no TTL header"])
            #expect(received.first { $0.text == "no VAPID at all" }?.subject == nil)
            #expect(received.first { $0.text == "no TTL header" }?.ttl == nil)
            #expect(received.first { $0.text == "no TTL header" }?.subject == "mailto:ops@example.com")
            #expect(simulator.counters.unifiedPushesAccepted == 3)
            let restrictedId = received.first { $0.text?.hasPrefix("{") == true }?.subscriptionId
            let restricted = try #require(simulator.unifiedPushEndpoints.first { $0.id == restrictedId })
            #expect(restricted.applicationServerKey != nil)
            let lines = try String(contentsOfFile: recordFile, encoding: .utf8).split(separator: "\n")
            #expect(lines.count == 3)
            let line = try #require(lines.compactMap { try? JSONValue(parsing: Array($0.utf8)) }.first {
                $0["subscription"]?.stringValue == restricted.id
            })
            #expect(line["service"]?.stringValue == "unifiedpush")
            #expect(line["plaintext"]?.stringValue == #"{"n":1,"text":"ünïcode"}"#)
            #expect(line["ttl"]?.intValue == 0)
            #expect(line["vapidKey"]?.stringValue == restricted.applicationServerKey)
        }
    }

    @Test func pywebpushPushesBreakingARuleAreRefused() async throws {
        try await SimulatorWebPushRefereeTests.referee { simulator, key in
            let gone = simulator.registerUnifiedPushEndpoint(vapid: key)
            simulator.unregisterUnifiedPushEndpoint(id: gone.id)
            return [
                ("aesgcm", "aesgcm", simulator.registerUnifiedPushEndpoint(), "x"),
                ("tampered", "tampered", simulator.registerUnifiedPushEndpoint(), "a message"),
                ("too-large", "too-large", simulator.registerUnifiedPushEndpoint(), String(repeating: "x", count: 4000)),
                ("restricted-anonymous", "no-vapid", simulator.registerUnifiedPushEndpoint(vapid: key), "x"),
                ("other-key", "other-key", simulator.registerUnifiedPushEndpoint(vapid: key), "x"),
                ("wrong-aud", "wrong-aud", simulator.registerUnifiedPushEndpoint(), "x"),
                ("gone", "valid", gone, "x"),
            ]
        } check: { simulator, answers in
            func expect(_ name: String, _ status: Int, _ reason: String) {
                #expect(answers[name]?.status == status, "\(name): \(answers[name]?.body ?? "")")
                #expect(answers[name]?.reason == reason, "\(name): \(answers[name]?.body ?? "")")
            }
            expect("aesgcm", 400, "EncryptionRequired")
            expect("tampered", 400, "DecryptionFailed")
            expect("too-large", 413, "PayloadTooLarge")
            expect("restricted-anonymous", 401, "MissingAuthorization")
            #expect(answers["restricted-anonymous"]?.headers["www-authenticate"] == "vapid")
            expect("other-key", 403, "VapidPkHashMismatch")
            // An Authorization given is verified, though the endpoint needs none.
            expect("wrong-aud", 403, "BadJwtToken")
            expect("gone", 404, "NotFound")
            #expect(simulator.receivedUnifiedPushes.isEmpty)
        }
    }

    @Test func theBodyHeaderAndVAPIDRulesOverHTTP2() async throws {
        try await SimulatorFixture.run(.either) { fixture in
            let client = try await fixture.connect()
            let simulator = fixture.simulator
            let endpoint = simulator.registerUnifiedPushEndpoint()
            func refused(_ request: H2TestClient.Request, _ status: Int, _ reason: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
                let answer = try await client.send(request)
                #expect(answer.status == status, "\(String(decoding: answer.body, as: UTF8.self))", sourceLocation: sourceLocation)
                #expect(reasonOf(answer) == reason, sourceLocation: sourceLocation)
            }
            let path = "/up/" + endpoint.id
            try await refused(.init(path: path, headers: [("content-encoding", "aes128gcm")], body: []), 400, "PayloadEmpty")
            try await refused(
                .init(path: path, headers: [("content-encoding", "aes128gcm")], body: [UInt8](repeating: 7, count: 4097)), 413,
                "PayloadTooLarge")
            try await refused(try Self.push(endpoint, "no coding", headers: []), 400, "EncryptionRequired")
            try await refused(try Self.push(endpoint, "x", headers: [("content-encoding", "aes128gcm"), ("ttl", "soon")]), 400, "BadTtl")
            try await refused(try Self.push(endpoint, "x", headers: [("content-encoding", "aes128gcm"), ("urgency", "now")]), 400, "BadUrgency")
            try await refused(.init(method: "PUT", path: path, body: []), 405, "MethodNotAllowed")

            // An endpoint registered with a VAPID key needs that key's Authorization.
            let signing = P256.Signing.PrivateKey()
            let restricted = simulator.registerUnifiedPushEndpoint(vapid: Array(signing.publicKey.x963Representation))
            try await refused(try Self.push(restricted, "anonymous"), 401, "MissingAuthorization")
            let other = try VAPIDSigner(key: P256.Signing.PrivateKey(), subject: "mailto:ops@example.com")
            try await refused(
                try Self.push(restricted, "other key", headers: [
                    ("content-encoding", "aes128gcm"), ("authorization", try other.authorization(origin: restricted.origin)),
                ]), 403, "VapidPkHashMismatch")
            let signer = try VAPIDSigner(key: signing, subject: "mailto:ops@example.com")
            let signed = try await client.send(try Self.push(restricted, "signed", headers: [
                ("content-encoding", "aes128gcm"), ("authorization", try signer.authorization(origin: restricted.origin)), ("ttl", "60"),
            ]))
            #expect(signed.status == 201, "\(String(decoding: signed.body, as: UTF8.self))")
            #expect(signed.header("ttl") == "0")
            #expect(simulator.receivedUnifiedPushes.map(\.text) == ["signed"])
            #expect(simulator.receivedUnifiedPushes.first?.ttl == 60)

            simulator.unregisterUnifiedPushEndpoint(id: restricted.id)
            try await refused(try Self.push(restricted, "gone"), 404, "NotFound")
            #expect(simulator.receivedUnifiedPushes.count == 1)
            await client.close()
        }
    }

    @Test func faultsAnswer429And503WithRetryAfterOverHTTP2AndHTTP1() async throws {
        for (fraction429, fraction503, status) in [(1.0, 0.0, 429), (0.0, 1.0, 503)] {
            let faults = SimulatorFaults(tooManyRequestsFraction: fraction429, serviceUnavailableFraction: fraction503)
            try await SimulatorFixture.run(.either, configure: { $0.faults = faults }) { fixture in
                let client = try await fixture.connect()
                let answer = try await client.send(try Self.push(fixture.simulator.registerUnifiedPushEndpoint(), "x"))
                #expect(answer.status == status)
                #expect(answer.header("retry-after") == "1")
                // Registering and discovery are not pushes: the faults leave them alone.
                let registered = try await client.send(.init(path: "/up/register", body: []))
                #expect(registered.status == 201)
                await client.close()
            }
            try await SimulatorWebPushRefereeTests.referee(configure: { $0.faults = faults }) { simulator, _ in
                [("fault", "no-vapid", simulator.registerUnifiedPushEndpoint(), "x")]
            } check: { simulator, answers in
                #expect(answers["fault"]?.status == status, "\(answers["fault"]?.body ?? "")")
                #expect(answers["fault"]?.headers["retry-after"] == "1")
                #expect(simulator.receivedUnifiedPushes.isEmpty)
            }
        }
    }

    @Test func theDelayFaultHoldsEveryPushAnswerOverHTTP2AndHTTP1() async throws {
        let delay = 400
        let faults = SimulatorFaults(responseDelay: .milliseconds(delay))
        try await SimulatorFixture.run(.either, configure: { $0.faults = faults }) { fixture in
            let client = try await fixture.connect()
            let endpoint = fixture.simulator.registerUnifiedPushEndpoint()
            for request in [try Self.push(endpoint, "slow"), .init(path: "/up/" + endpoint.id, body: [])] {
                let start = ContinuousClock.now
                let answer = try await client.send(request)
                #expect(ContinuousClock.now - start >= .milliseconds(delay), "status \(answer.status ?? 0)")
            }
            #expect(fixture.simulator.receivedUnifiedPushes.map(\.text) == ["slow"])
            await client.close()
        }
        try await SimulatorWebPushRefereeTests.referee(configure: { $0.faults = faults }) { simulator, key in
            [("slow", "no-vapid", simulator.registerUnifiedPushEndpoint(), "slow"),
             ("slow-refusal", "no-vapid", simulator.registerUnifiedPushEndpoint(vapid: key), "x")]
        } check: { simulator, answers in
            #expect(answers["slow"]?.status == 201)
            #expect(answers["slow-refusal"]?.status == 401)
            for name in ["slow", "slow-refusal"] {
                #expect((answers[name]?.elapsed ?? 0) >= Double(delay) / 1000, "\(name): \(answers[name]?.elapsed ?? 0) s")
            }
        }
    }

    @Test func theMintScriptRegistersEndpointsAndUnregistersEveryNth() async throws {
        try await SimulatorFixture.run(.either) { fixture in
            let directory = try TemporaryDirectories.make("unifiedpush-mint")
            let caFile = directory + "/ca.pem"
            try fixture.pki.ca.certificatePEM.write(toFile: caFile, atomically: true, encoding: .utf8)
            let script = BuiltPushctl.packageRoot.appendingPathComponent("Tests/unifiedpush/mint_endpoints.py").path
            let key = StrictBase64URL.encode(P256.Signing.PrivateKey().publicKey.x963Representation)
            func mint(_ key: String, _ count: Int, _ every: Int) async throws -> [JSONValue] {
                let outcome = try await ProcessRunner.run(
                    URL(fileURLWithPath: "/usr/bin/env"),
                    ["python3", script, "127.0.0.1", String(fixture.port), caFile, key, String(count), String(every)], timeout: 60)
                try #require(outcome.status == 0, "mint_endpoints.py failed (\(outcome.status)): \(outcome.stderr)")
                return try outcome.stdout.split(separator: "\n").map { try JSONValue(parsing: Array($0.utf8)) }
            }
            let lines = try await mint(key, 5, 2)
            #expect(lines.map { $0["gone"] } == [.bool(true), .bool(false), .bool(true), .bool(false), .bool(true)])
            for line in lines {
                #expect(line.objectPairs?.map(\.0) == ["endpoint", "keys", "gone"])
                #expect(line["endpoint"]?.stringValue?.hasPrefix("https://127.0.0.1:\(fixture.port)/up/") == true)
                #expect(line["keys"]?["p256dh"]?.stringValue.flatMap(StrictBase64URL.decode)?.count == 65)
                #expect(line["keys"]?["auth"]?.stringValue.flatMap(StrictBase64URL.decode)?.count == 16)
            }
            let endpoints = fixture.simulator.unifiedPushEndpoints
            #expect(endpoints.count == 5)
            #expect(endpoints.allSatisfy { $0.applicationServerKey == key })
            // A gone endpoint's push answers 404, a live one's needs its VAPID key.
            let client = try await fixture.connect()
            for line in lines {
                let endpoint = try #require(endpoints.first { $0.endpoint == line["endpoint"]?.stringValue })
                let answer = try await client.send(try Self.push(endpoint, "x"))
                #expect(answer.status == (line["gone"] == .bool(true) ? 404 : 401))
            }
            let unrestricted = try await mint("-", 2, 0)
            #expect(unrestricted.map { $0["gone"] } == [.bool(false), .bool(false)])
            #expect(fixture.simulator.unifiedPushEndpoints.filter { $0.applicationServerKey == nil }.count == 2)
            await client.close()
        }
    }
}
