import PushSimulator
import Crypto
import Foundation
import PushCore
import TestSupport
import Testing

/// The simulator's Web Push service refereed by PyPI's pywebpush (its own RFC 8291 encryption through http_ece and
/// RFC 8292 VAPID through py_vapid.Vapid02), over HTTP/1.1 on real sockets: what pywebpush sends correctly is
/// accepted and recorded decrypted, exactly once; each way of getting it wrong is refused with the status and
/// reason a strict push service gives. Tests/webpush/sim_pywebpush.py is the sender; `make referees`
/// installs it. The test fails (never skips) when the Python modules are missing.
@Suite struct SimulatorWebPushRefereeTests {
    struct Answer: Decodable {
        var name: String
        var status: Int
        var body: String
        var headers: [String: String]
        /// How long the case took, in seconds.
        var elapsed: Double?
        var reason: String? {
            (try? JSONValue(parsing: Array(body.utf8)))?["reason"]?.stringValue
        }
    }

    /// Starts a simulator, lets `cases(simulator, vapidPublicKey)` mint subscriptions and name the cases, runs the
    /// script on them and hands back its answers by name.
    static func referee(
        configure: (inout SimulatorConfiguration) -> Void = { _ in },
        _ cases: (PushSimulator, [UInt8]) throws -> [(name: String, mode: String, subscription: MintedSubscription, data: String)],
        check: (PushSimulator, [String: Answer]) throws -> Void
    ) async throws {
        let pki = try SimulatorPKI()
        var configuration = SimulatorConfiguration(
            caPEM: pki.ca.certificatePEM, serverCertificatePEM: pki.server.certificatePEM,
            serverKeyPEM: pki.server.keyPEM, clientAuth: .either)
        configure(&configuration)
        let simulator = try PushSimulator(configuration: configuration)
        _ = try await simulator.start()
        do {
            let directory = try TemporaryDirectories.make("webpush-referee")
            let caFile = directory + "/ca.pem"
            try pki.ca.certificatePEM.write(toFile: caFile, atomically: true, encoding: .utf8)
            let vapidKey = P256.Signing.PrivateKey()
            var list: [JSONValue] = []
            for c in try cases(simulator, Array(vapidKey.publicKey.x963Representation)) {
                list.append(.object([
                    ("name", .string(c.name)), ("mode", .string(c.mode)),
                    ("subscription", try JSONValue(parsing: Array(c.subscription.json.utf8))), ("data", .string(c.data)),
                ]))
            }
            let spec = JSONValue.object([("vapidKeyPEM", .string(vapidKey.pemRepresentation)), ("cases", .array(list))])
            let specFile = directory + "/cases.json"
            try spec.encodedString.write(toFile: specFile, atomically: true, encoding: .utf8)
            var environment = ProcessInfo.processInfo.environment
            environment["REQUESTS_CA_BUNDLE"] = caFile
            let script = BuiltPushctl.packageRoot.appendingPathComponent("Tests/webpush/sim_pywebpush.py").path
            let outcome = try await ProcessRunner.run(
                URL(fileURLWithPath: "/usr/bin/env"), ["python3", script, specFile], environment: environment, timeout: 120)
            try #require(outcome.status == 0, "sim_pywebpush.py failed (\(outcome.status)): \(outcome.stderr)")
            var answers: [String: Answer] = [:]
            for line in outcome.stdout.split(separator: "\n") {
                let answer = try JSONDecoder().decode(Answer.self, from: Data(line.utf8))
                answers[answer.name] = answer
            }
            try #require(answers.count == list.count, "\(outcome.stdout)\n\(outcome.stderr)")
            try check(simulator, answers)
        } catch {
            try? await simulator.stop()
            throw error
        }
        try await simulator.stop()
    }

    @Test func pywebpushMessageIsAcceptedAndRecordedDecryptedExactlyOnce() async throws {
        let text = #"{"title":"Hello","body":"from pywebpush — ünïcode"}"#
        let recordFile = try TemporaryDirectories.make("webpush-record") + "/record.jsonl"
        try await Self.referee(configure: { $0.recordFile = recordFile }) { simulator, key in
            [("valid", "valid", simulator.mintWebPushSubscription(applicationServerKey: key), text),
             ("unrestricted", "valid", simulator.mintWebPushSubscription(), "second"),
             ("headers", "urgent-topic", simulator.mintWebPushSubscription(), "third")]
        } check: { simulator, answers in
            #expect(answers["valid"]?.status == 201, "\(answers["valid"]?.body ?? "")")
            #expect(answers["unrestricted"]?.status == 201, "\(answers["unrestricted"]?.body ?? "")")
            #expect(answers["headers"]?.status == 201, "\(answers["headers"]?.body ?? "")")
            let location = answers["valid"]?.headers["location"] ?? ""
            #expect(location.hasPrefix("https://127.0.0.1:\(simulator.port ?? 0)/m/"), "\(location)")
            let received = simulator.receivedWebPushes
            #expect(received.count == 3)
            let valid = simulator.webPushSubscriptions.first { $0.applicationServerKey != nil }
            let forValid = received.filter { $0.subscriptionId == valid?.id }
            #expect(forValid.count == 1)
            #expect(forValid.first?.text == text)
            #expect(forValid.first?.subject == "mailto:ops@example.com")
            #expect(forValid.first?.ttl == 0)
            let headers = received.first { $0.text == "third" }
            #expect(headers?.urgency == "high")
            #expect(headers?.topic == "abc_DEF-123")
            #expect(headers?.ttl == 60)
            #expect(simulator.counters.webPushesAccepted == 3)
            // The record file has each message once, by subscription, with its exact bytes.
            let lines = try String(contentsOfFile: recordFile, encoding: .utf8).split(separator: "\n")
            #expect(lines.count == 3)
            let line = try #require(lines.compactMap { try? JSONValue(parsing: Array($0.utf8)) }.first {
                $0["subscription"]?.stringValue == valid?.id
            })
            #expect(line["service"]?.stringValue == "webpush")
            #expect(line["plaintext"]?.stringValue == text)
            #expect(line["plaintextBase64"]?.stringValue == StrictBase64URL.encode(Array(text.utf8)))
        }
    }

    @Test func pywebpushWithAWrongSubOrAudOrKeyIsRefused() async throws {
        try await Self.referee { simulator, key in
            [("wrong-sub", "wrong-sub", simulator.mintWebPushSubscription(applicationServerKey: key), "x"),
             ("wrong-aud", "wrong-aud", simulator.mintWebPushSubscription(applicationServerKey: key), "x"),
             ("bad-signature", "bad-signature", simulator.mintWebPushSubscription(), "x"),
             ("other-key", "other-key", simulator.mintWebPushSubscription(applicationServerKey: key), "x"),
             ("draft-vapid", "draft-vapid", simulator.mintWebPushSubscription(), "x"),
             ("exp-25h", "exp-25h", simulator.mintWebPushSubscription(), "x"),
             ("exp-past", "exp-past", simulator.mintWebPushSubscription(), "x")]
        } check: { simulator, answers in
            #expect(answers["wrong-sub"]?.status == 403)
            #expect(answers["wrong-sub"]?.reason == "BadJwtToken", "\(answers["wrong-sub"]?.body ?? "")")
            #expect(answers["wrong-aud"]?.status == 403)
            #expect(answers["wrong-aud"]?.reason == "BadJwtToken", "\(answers["wrong-aud"]?.body ?? "")")
            #expect(answers["bad-signature"]?.status == 403)
            #expect(answers["bad-signature"]?.body.contains("signature does not verify") == true, "\(answers["bad-signature"]?.body ?? "")")
            #expect(answers["other-key"]?.status == 403)
            #expect(answers["other-key"]?.reason == "VapidPkHashMismatch", "\(answers["other-key"]?.body ?? "")")
            #expect(answers["draft-vapid"]?.status == 401)
            #expect(answers["draft-vapid"]?.reason == "MissingAuthorization", "\(answers["draft-vapid"]?.body ?? "")")
            #expect(answers["draft-vapid"]?.headers["www-authenticate"] == "vapid")
            #expect(answers["exp-25h"]?.status == 403)
            #expect(answers["exp-25h"]?.reason == "BadJwtToken", "\(answers["exp-25h"]?.body ?? "")")
            #expect(answers["exp-past"]?.status == 403)
            #expect(answers["exp-past"]?.reason == "ExpiredJwtToken", "\(answers["exp-past"]?.body ?? "")")
            #expect(simulator.receivedWebPushes.isEmpty)
        }
    }

    @Test func pywebpushWithWrongHeadersOrBodyIsRefused() async throws {
        try await Self.referee { simulator, _ in
            let expired = simulator.mintWebPushSubscription()
            simulator.expireWebPushSubscription(id: expired.id)
            return [
                ("no-ttl", "no-ttl", simulator.mintWebPushSubscription(), "x"),
                ("bad-urgency", "bad-urgency", simulator.mintWebPushSubscription(), "x"),
                ("long-topic", "long-topic", simulator.mintWebPushSubscription(), "x"),
                ("aesgcm", "aesgcm", simulator.mintWebPushSubscription(), "x"),
                ("tampered", "tampered", simulator.mintWebPushSubscription(), "a message"),
                ("too-large", "too-large", simulator.mintWebPushSubscription(), String(repeating: "x", count: 4000)),
                ("expired", "valid", expired, "x"),
            ]
        } check: { simulator, answers in
            func expect(_ name: String, _ status: Int, _ reason: String) {
                #expect(answers[name]?.status == status, "\(name): \(answers[name]?.body ?? "")")
                #expect(answers[name]?.reason == reason, "\(name): \(answers[name]?.body ?? "")")
            }
            expect("no-ttl", 400, "BadTtl")
            expect("bad-urgency", 400, "BadUrgency")
            expect("long-topic", 400, "BadWebPushTopic")
            expect("aesgcm", 415, "UnsupportedContentEncoding")
            expect("tampered", 400, "DecryptionFailed")
            expect("too-large", 413, "PayloadTooLarge")
            expect("expired", 410, "Unregistered")
            #expect(simulator.receivedWebPushes.isEmpty)
        }
    }

    @Test func overHTTP2TheSamePushIsAcceptedAndRecorded() async throws {
        try await Self.referee { simulator, _ in
            [("h2", "valid-h2", simulator.mintWebPushSubscription(), "over HTTP/2")]
        } check: { simulator, answers in
            #expect(answers["h2"]?.status == 201, "\(answers["h2"]?.body ?? "")")
            #expect(answers["h2"]?.headers["http-version"] == "2")
            #expect(simulator.receivedWebPushes.map(\.text) == ["over HTTP/2"])
        }
    }

    @Test func subscribeMintsARestrictedSubscriptionAndDeleteExpiresIt() async throws {
        try await Self.referee { simulator, _ in
            [("flow", "subscribe-flow", simulator.mintWebPushSubscription(), "via /subscribe")]
        } check: { simulator, answers in
            let flow = try JSONValue(parsing: Array(try #require(answers["flow"]).body.utf8))
            #expect(flow["subscribe"]?.intValue == 201)
            #expect(flow["push"]?.intValue == 201)
            #expect(flow["delete"]?.intValue == 204)
            #expect(flow["pushAfterDelete"]?.intValue == 410)
            let endpoint = flow["subscription"]?["endpoint"]?.stringValue ?? ""
            #expect(endpoint.hasPrefix("https://127.0.0.1:\(simulator.port ?? 0)/wp/"), "\(endpoint)")
            #expect(flow["subscription"]?["keys"]?["auth"]?.stringValue.flatMap(StrictBase64URL.decode)?.count == 16)
            let minted = simulator.webPushSubscriptions.first { endpoint.hasSuffix("/wp/" + $0.id) }
            #expect(minted?.applicationServerKey != nil)
            #expect(simulator.receivedWebPushes.map(\.text) == ["via /subscribe"])
        }
    }

    @Test func faultsAnswer429And503WithRetryAfter() async throws {
        for (fraction429, fraction503, status) in [(1.0, 0.0, 429), (0.0, 1.0, 503)] {
            try await Self.referee(configure: {
                $0.faults = SimulatorFaults(tooManyRequestsFraction: fraction429, serviceUnavailableFraction: fraction503)
            }) { simulator, _ in
                [("fault", "valid", simulator.mintWebPushSubscription(), "x")]
            } check: { simulator, answers in
                #expect(answers["fault"]?.status == status, "\(answers["fault"]?.body ?? "")")
                #expect(answers["fault"]?.headers["retry-after"] == "1")
                #expect(simulator.receivedWebPushes.isEmpty)
            }
        }
    }

    @Test func theGoAwayFaultClosesAnHTTP1ConnectionAfterItsNthAnswer() async throws {
        try await Self.referee(configure: { $0.faults = SimulatorFaults(goAwayAfterStreams: 1) }) { simulator, _ in
            [("pair", "two-on-one", simulator.mintWebPushSubscription(), "twice")]
        } check: { simulator, answers in
            let pair = try JSONValue(parsing: Array(try #require(answers["pair"]).body.utf8))
            #expect(pair.arrayValue?.map { $0["status"]?.intValue } == [201, 201])
            // Each answer is the first on its connection, so each says close, and the second push needed a new one.
            #expect(pair.arrayValue?.map { $0["connection"]?.stringValue } == ["close", "close"])
            #expect(simulator.counters.goAways == 2)
            #expect(simulator.counters.connections == 2)
            #expect(simulator.receivedWebPushes.map(\.text) == ["twice", "twice"])
        }
    }

    @Test func withoutTheFaultTwoPushesShareOneHTTP1Connection() async throws {
        try await Self.referee { simulator, _ in
            [("pair", "two-on-one", simulator.mintWebPushSubscription(), "twice")]
        } check: { simulator, answers in
            let pair = try JSONValue(parsing: Array(try #require(answers["pair"]).body.utf8))
            #expect(pair.arrayValue?.map { $0["connection"] } == [.null, .null])
            #expect(simulator.counters.connections == 1)
            #expect(simulator.counters.goAways == 0)
        }
    }
}
