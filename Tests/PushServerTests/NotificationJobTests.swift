import PushSimulator
import Foundation
import PushCore
import PushSender
import PushServer
import PushStore
import Testing
import TestSupport

/// Send jobs over a real socket, executed against the real simulator with real .p12 credentials.
@Suite(.timeLimit(.minutes(1))) struct NotificationJobTests {
    struct Setup {
        let dir: String
        let config: PushConfiguration
        let simulator: PushSimulator

        /// `tokenAuth`: the app authenticates with its .p8 key and the simulator checks provider tokens (Live
        /// Activities need token-based authentication).
        /// `webPush`: the example app has Web Push too (a VAPID key, the simulator's Web Push service allowed, its CA
        /// trusted), and the simulator lets connections without a client certificate in.
        static func make(responseDelayMs: Int = 0, secondApp: Bool = false, tokenAuth: Bool = false, webPush: Bool = false, fcm: Bool = false, unifiedPush: Bool = false) async throws -> Setup {
            let dir = NSTemporaryDirectory() + "jobs-" + UUID().uuidString
            let certs = dir + "/certs"
            try DevCertificates.make(in: certs, options: .init(topic: "com.example.app"))
            let pem = try SimulatorConfiguration.pemFiles(in: certs)
            var faults = SimulatorFaults()
            if responseDelayMs > 0 { faults.responseDelay = .milliseconds(responseDelayMs) }
            let p8 = certs + "/AuthKey_\(DevCertificates.keyId).p8"
            let jwtKeys = tokenAuth
                ? [SimulatorJWTKey(keyId: DevCertificates.keyId, teamId: DevCertificates.teamId,
                                   publicKeyPEM: try String(contentsOfFile: certs + "/AuthKey_\(DevCertificates.keyId).pub.pem", encoding: .utf8))]
                : []
            let simulator = try PushSimulator(configuration: SimulatorConfiguration(
                host: "127.0.0.1", port: 0, caPEM: pem.ca, serverCertificatePEM: pem.certificate,
                serverKeyPEM: pem.key, clientAuth: tokenAuth ? .token : webPush || fcm || unifiedPush ? .either : .certificate, jwtKeys: jwtKeys,
                receivedLimit: 100_000, faults: faults))
            let port = try await simulator.start()
            let app = AppSettings(
                topic: "com.example.app", endpoint: .simulator,
                auth: tokenAuth
                    ? .token(p8: p8, keyId: DevCertificates.keyId, teamId: DevCertificates.teamId)
                    : .certificate(p12: certs + "/client.p12", password: .file(certs + "/client.p12.password")),
                registrationKeys: [APIKeys.hash("reg")], sendKeys: [APIKeys.hash("send")])
            var apps = ["example": app]
            if webPush {
                _ = try VAPIDKeyFile.create(at: dir + "/vapid.pem")
                apps["example"]?.webPush = try WebPushSettings(
                    vapidKey: dir + "/vapid.pem", subject: "mailto:ops@example.com", allowedHosts: ["127.0.0.1:\(port)"],
                    caFile: certs + "/ca.pem")
            }
            if unifiedPush {
                // The simulator as the users' distributor: its host:port exempt from the address check, its CA trusted.
                _ = try VAPIDKeyFile.create(at: dir + "/up-vapid.pem")
                apps["example"]?.unifiedPush = try UnifiedPushSettings(
                    vapidKey: dir + "/up-vapid.pem", subject: "mailto:ops@example.com", exemptHosts: ["127.0.0.1:\(port)"],
                    caFile: certs + "/ca.pem")
            }
            if fcm {
                // A development service account the simulator trusts, as `pushctl fcm account new` writes one (0600).
                let (account, json) = try await offThePool { try SimulatorServiceAccount.makeDevelopment(tokenURI: simulator.tokenURI) }
                try simulator.trustServiceAccount(account)
                let path = dir + "/fcm.json"
                #expect(FileManager.default.createFile(atPath: path, contents: Data(json.utf8), attributes: [.posixPermissions: 0o600]))
                apps["example"]?.fcm = FCMSettings(serviceAccount: path, endpoint: .simulator)
            }
            if secondApp {
                var second = app
                second.sendKeys = [APIKeys.hash("send2")]
                second.registrationKeys = []
                apps["second"] = second
            }
            let config = PushConfiguration(
                database: dir + "/registry.sqlite", server: ServerSettings(host: "127.0.0.1", port: 0),
                simulator: SimulatorSettings(host: "127.0.0.1", port: port, certificates: certs), apps: apps)
            return Setup(dir: dir, config: config, simulator: simulator)
        }

        func server() async throws -> (TestServer, SQLiteRegistry) {
            let registry = try SQLiteRegistry(path: config.database)
            let server = PushServer(
                configuration: config, registry: registry, keys: APIKeys(apps: config.apps),
                credentials: ["example": .init(loaded: true, kind: "certificate", daysLeft: 365)])
            let running = try await server.start(host: "127.0.0.1", port: 0)
            return (TestServer(running: running, store: registry, directory: URL(fileURLWithPath: dir + "/unused")), registry)
        }

        func seed(_ registry: SQLiteRegistry, _ count: Int, app: String = "example") throws -> [DeviceToken] {
            let tokens = try (0..<count).map { i -> DeviceToken in
                let d = String(i, radix: 16)
                return try DeviceToken(parsing: "ab" + String(repeating: "0", count: 62 - d.count) + d)
            }
            for r in registry.registerBatch(tokens.map { RegistrationRequest(app: app, token: $0, environment: .development) }) {
                _ = try r.get()
            }
            return tokens
        }

        func stop() async throws {
            try await simulator.stop()
            try? FileManager.default.removeItem(atPath: dir)
        }
    }

    func waitForState(_ s: TestServer, _ id: String, _ states: Set<String>, seconds: Double = 60) async throws -> JSONValue {
        var found = JSONValue.null
        try await waitUntil(deadline: .milliseconds(Int64(seconds * 1000)), every: .milliseconds(100), "job \(id) reaching \(states)") {
            let r = try await s.request("GET", "/v1/apps/example/notifications/\(id)", key: "send")
            guard let json = r.json, let state = json["state"]?.stringValue, states.contains(state) else { return false }
            found = json
            return true
        }
        return found
    }

    struct TestTimeout: Error { let what: String }

    @Test func acceptsAJobAndDeliversItToEveryDevice() async throws {
        let setup = try await Setup.make()
        let (s, registry) = try await setup.server()
        let tokens = try setup.seed(registry, 300)
        let r = try await s.request("POST", "/v1/apps/example/notifications", key: "send", contentType: "application/json",
                                    body: #"{"all":true,"alert":"Hello","sound":"default","data":{"photoTitle":"Nebula"}}"#)
        #expect(r.status == 202)
        let id = try #require(r.json?["id"]?.stringValue)
        let status = try await waitForState(s, id, ["completed", "failed"])
        #expect(status["state"]?.stringValue == "completed")
        #expect(status["accepted"] == .int(300))
        let received = setup.simulator.received
        #expect(Set(received.map(\.request.token)) == Set(tokens))
        let payload = try JSONValue(parsing: try #require(received.first).request.payload)
        #expect(payload == (try JSONValue(parsing: #"{"aps":{"alert":"Hello","sound":"default"},"photoTitle":"Nebula"}"#)))
        // The sends show in /metrics (read from the delivery log).
        let metrics = String(decoding: try await s.request("GET", "/metrics").body, as: UTF8.self)
        #expect(metrics.contains(#"pushprovider_deliveries_total{app="example",service="apns",status="200",reason=""} 300"#))
        // The app's sender: nothing left in flight, every answer timed, one connection, the endpoint up.
        #expect(metrics.contains(#"pushprovider_apns_in_flight{app="example"} 0"#))
        #expect(metrics.contains(#"pushprovider_apns_response_seconds_count{app="example"} 300"#))
        #expect(metrics.contains(#"pushprovider_apns_response_seconds_bucket{app="example",le="+Inf"} 300"#))
        let opened = metrics.split(separator: "\n").first { $0.hasPrefix(#"pushprovider_apns_connections_opened_total{app="example"} "#) }
        #expect((opened?.split(separator: " ").last.flatMap { Int($0) } ?? 0) >= 1)
        #expect(metrics.contains(#"pushprovider_apns_reconnects_total{app="example"} "#))
        #expect(metrics.contains(#"pushprovider_apns_endpoint_up{app="example",endpoint="https://127.0.0.1:\#(setup.config.simulator.port)"} 1"#))
        #expect(metrics.contains(#"pushprovider_pruning_breaker_tripped{app="example",endpoint="https://127.0.0.1:\#(setup.config.simulator.port)"} 0"#))
        try await s.stop()
        try await setup.stop()
    }

    @Test func aJobReachesAnAppsWebDevicesThroughTheirPushServiceAndMetricsShowWebPushApart() async throws {
        let setup = try await Setup.make(webPush: true)
        let (s, registry) = try await setup.server()
        let tokens = try setup.seed(registry, 5)
        let key = try #require(try await s.request("GET", "/v1/apps/example/webpush/key", key: "send").json?["publicKey"]?.stringValue)
        let minted = (0..<5).map { _ in setup.simulator.mintWebPushSubscription(applicationServerKey: Base64URL.decode(key)) }
        for m in minted {
            let r = try await s.request("POST", "/v1/apps/example/devices", key: "reg", contentType: "application/json",
                                        body: #"{"service":"webpush","subscription":\#(m.json)}"#)
            #expect(r.status == 201, "\(String(decoding: r.body, as: UTF8.self))")
        }
        let r = try await s.request("POST", "/v1/apps/example/notifications", key: "send", contentType: "application/json",
                                    body: #"{"all":true,"alert":"Hello"}"#)
        let id = try #require(r.json?["id"]?.stringValue)
        let status = try await waitForState(s, id, ["completed", "failed"])
        #expect(status["state"]?.stringValue == "completed")
        #expect(status["accepted"] == .int(10))
        #expect(Set(setup.simulator.received.map(\.request.token)) == Set(tokens))
        let web = setup.simulator.receivedWebPushes
        #expect(Set(web.map(\.subscriptionId)) == Set(minted.map(\.id)))
        #expect(web.allSatisfy { (try? JSONValue(parsing: $0.plaintext))?["body"]?.stringValue == "Hello" })
        let metrics = String(decoding: try await s.request("GET", "/metrics").body, as: UTF8.self)
        #expect(metrics.contains(#"pushprovider_deliveries_total{app="example",service="webpush",status="201",reason=""} 5"#), "\(metrics)")
        #expect(metrics.contains(#"pushprovider_deliveries_total{app="example",service="apns",status="200",reason=""} 5"#), "\(metrics)")
        #expect(metrics.contains(#"pushprovider_apns_response_seconds_count{app="example"} 5"#))
        #expect(metrics.contains(#"pushprovider_webpush_in_flight{app="example"} 0"#))
        #expect(metrics.contains(#"pushprovider_webpush_response_seconds_count{app="example"} 5"#))
        #expect(metrics.contains(#"pushprovider_webpush_endpoint_up{app="example",endpoint="https://127.0.0.1:\#(setup.config.simulator.port)"} 1"#))
        try await s.stop()
        try await setup.stop()
    }

    /// UnifiedPush's sender in /metrics: deliveries under `service="unifiedpush"`, its figures under
    /// `pushprovider_unifiedpush_…`, and its distributors counted, never named (each is a user's choice).
    @Test func aJobReachesAnAppsUnifiedPushDevicesAndMetricsShowUnifiedPushApartWithoutNamingDistributors() async throws {
        let setup = try await Setup.make(unifiedPush: true)
        let (s, registry) = try await setup.server()
        _ = try setup.seed(registry, 2)
        let endpoints = (0..<3).map { _ in setup.simulator.registerUnifiedPushEndpoint() }
        for e in endpoints {
            let body = #"{"service":"unifiedpush","subscription":{"endpoint":"\#(e.endpoint)","keys":{"p256dh":"\#(e.p256dh)","auth":"\#(e.auth)"}}}"#
            let r = try await s.request("POST", "/v1/apps/example/devices", key: "reg", contentType: "application/json", body: body)
            #expect(r.status == 201, "\(String(decoding: r.body, as: UTF8.self))")
        }
        let r = try await s.request("POST", "/v1/apps/example/notifications", key: "send", contentType: "application/json",
                                    body: #"{"all":true,"alert":"Hello"}"#)
        let id = try #require(r.json?["id"]?.stringValue)
        let status = try await waitForState(s, id, ["completed", "failed"])
        #expect(status["accepted"] == .int(5), "\(status)")
        #expect(Set(setup.simulator.receivedUnifiedPushes.map(\.subscriptionId)) == Set(endpoints.map(\.id)))
        let metrics = String(decoding: try await s.request("GET", "/metrics").body, as: UTF8.self)
        #expect(metrics.contains(#"pushprovider_deliveries_total{app="example",service="unifiedpush",status="201",reason=""} 3"#), "\(metrics)")
        #expect(metrics.contains(#"pushprovider_unifiedpush_in_flight{app="example"} 0"#), "\(metrics)")
        #expect(metrics.contains(#"pushprovider_unifiedpush_response_seconds_count{app="example"} 3"#), "\(metrics)")
        #expect(metrics.contains(#"pushprovider_unifiedpush_connections_opened_total{app="example"} "#), "\(metrics)")
        #expect(metrics.contains(#"pushprovider_unifiedpush_distributors{app="example",state="reachable"} 1"#), "\(metrics)")
        #expect(metrics.contains(#"pushprovider_unifiedpush_distributors{app="example",state="unreachable"} 0"#), "\(metrics)")
        #expect(!metrics.contains("pushprovider_unifiedpush_endpoint_up"), "a distributor's origin is a user's, not a label")
        try await s.stop()
        try await setup.stop()
    }

    @Test func aJobReachesAnAppsAndroidDevicesThroughFCMPrunesTheUninstalledAndMetricsShowFCMApart() async throws {
        let setup = try await Setup.make(fcm: true)
        let (s, registry) = try await setup.server()
        let tokens = try setup.seed(registry, 5)
        let android = (0..<5).map { _ in PushSimulator.mintFCMToken() }
        for token in android {
            let r = try await s.request("POST", "/v1/apps/example/devices", key: "reg", contentType: "application/json",
                                        body: #"{"service":"fcm","token":"\#(token)","locale":"en-US"}"#)
            #expect(r.status == 201, "\(String(decoding: r.body, as: UTF8.self))")
        }
        setup.simulator.unregisterFCMToken(android[0])
        let r = try await s.request("POST", "/v1/apps/example/notifications", key: "send", contentType: "application/json",
                                    body: #"{"all":true,"title":"Hi","alert":"Hello","options":{"collapseId":"greeting"}}"#)
        let id = try #require(r.json?["id"]?.stringValue)
        let status = try await waitForState(s, id, ["completed", "failed"])
        #expect(status["state"]?.stringValue == "completed")
        #expect(status["accepted"] == .int(9), "\(status)")
        #expect(Set(setup.simulator.received.map(\.request.token)) == Set(tokens))
        let messages = setup.simulator.receivedFCMMessages
        #expect(Set(messages.compactMap(\.token)) == Set(android.dropFirst()))
        for m in messages {
            #expect(m.message["notification"]?["title"]?.stringValue == "Hi")
            #expect(m.message["notification"]?["body"]?.stringValue == "Hello")
            #expect(m.message["android"]?["collapse_key"]?.stringValue == "greeting")
        }
        // The uninstalled app's token is gone; the others stay.
        let left = try await registry.run { try $0.count(app: "example", channel: nil, environment: nil) }
        #expect(left == 9)
        let metrics = String(decoding: try await s.request("GET", "/metrics").body, as: UTF8.self)
        #expect(metrics.contains(#"pushprovider_fcm_in_flight{app="example"} 0"#), "\(metrics)")
        #expect(metrics.contains(#"pushprovider_fcm_response_seconds_count{app="example"} 5"#))
        // One access token was granted and sent with, but the grant requests are not always one: on a busy box the
        // simulator (its TLS on the test process's shared event loops) may not answer a grant within libcurl's 10 s,
        // and that timed-out grant is rightly retried, after the cache's backoff, as an unreachable token endpoint
        // (docs/fcm.md, "Access tokens"). The product's bound is one grant that succeeds, and every other request is
        // a failed one, counted as such; the simulator granted at least that one and never more than was asked.
        func value(_ series: String) -> Int? {
            metrics.split(separator: "\n").first { $0.hasPrefix(series + " ") }.flatMap { Int($0.dropFirst(series.count + 1)) }
        }
        let grants = try #require(value(#"pushprovider_fcm_access_token_grants_total{app="example"}"#), "\(metrics)")
        let failedGrants = try #require(value(#"pushprovider_fcm_access_token_grant_failures_total{app="example"}"#), "\(metrics)")
        #expect(grants >= 1 && grants - failedGrants == 1, "\(grants) grants requested, \(failedGrants) of them failed")
        let granted = setup.simulator.accessTokensGranted
        #expect(granted >= 1 && granted <= grants, "the simulator granted \(granted)")
        #expect(setup.simulator.accessTokenRequestsRefused == 0)
        #expect(metrics.contains(#"pushprovider_apns_response_seconds_count{app="example"} 5"#))
        try await s.stop()
        try await setup.stop()
    }

    @Test func explicitTokensSilentPushAndIdempotentIds() async throws {
        let setup = try await Setup.make()
        let (s, registry) = try await setup.server()
        let tokens = try setup.seed(registry, 10)
        let list = tokens.prefix(3).map { "\"\($0.hex)\"" }.joined(separator: ",")
        let body = #"{"id":"photo-1","tokens":[\#(list)],"silent":true,"data":{"photoTitle":"Nebula"}}"#
        let first = try await s.request("POST", "/v1/apps/example/notifications", key: "send", contentType: "application/json", body: body)
        #expect(first.status == 202)
        #expect(first.json?["id"]?.stringValue == "photo-1")
        _ = try await waitForState(s, "photo-1", ["completed"])
        let again = try await s.request("POST", "/v1/apps/example/notifications", key: "send", contentType: "application/json", body: body)
        #expect(again.status == 202)
        #expect(again.json?["state"]?.stringValue == "completed")
        let clash = try await s.request("POST", "/v1/apps/example/notifications", key: "send", contentType: "application/json",
                                        body: #"{"id":"photo-1","all":true,"alert":"other"}"#)
        #expect(clash.status == 409)
        let received = setup.simulator.received.map(\.request)
        #expect(received.count == 3)
        #expect(received.allSatisfy { $0.pushType == .background && $0.priority == .conserve })
        try await s.stop()
        try await setup.stop()
    }

    /// A Live Activity start to one push-to-start token, now or at `at`.
    static func start(id: String, token: String, at: String?) -> String {
        #"{"id":"\#(id)","tokens":["\#(token)"],"# + (at.map { #""at":"\#($0)","# } ?? "")
            + #""content":{"attributes-type":"Score","attributes":{},"content-state":{},"alert":{"title":"t","body":"go"},"timestamp":1700000000}}"#
    }

    /// "Run this id again?" through the API: each kind of job (a send job to tokens, a scheduled send to all, a
    /// local-time job, a scheduled Live Activity start), cancelled, then every kind of request under its id at each
    /// entry point (`…/notifications` and `…/live-activities/start`): 409 `job_cancelled` with a JSON body, nothing
    /// stored, nothing sent. A completed id asked again is 202 without a send; another job under a live id is 409
    /// `id_conflict`. (Token authentication: the API refuses Live Activities to certificate apps.)
    @Test func aCancelledIdOfEveryKindOfJobIsA409ForEveryRequest() async throws {
        let setup = try await Setup.make(tokenAuth: true)
        let (s, registry) = try await setup.server()
        let tokens = try setup.seed(registry, 5)
        func post(_ path: String, _ body: String) async throws -> TestServer.Reply {
            try await s.request("POST", "/v1/apps/example/\(path)", key: "send", contentType: "application/json", body: body)
        }
        let later = Timestamp.rfc3339(ms: Int64(Date().timeIntervalSince1970 * 1000) + 3_600_000)
        let token = tokens[0].hex
        let jobs: [(id: String, path: String, body: String)] = [
            ("t1", "notifications", #"{"id":"t1","tokens":["\#(token)"],"alert":"a","at":"\#(later)"}"#),
            ("all1", "notifications", #"{"id":"all1","all":true,"alert":"b","at":"\#(later)"}"#),
            ("loc", "notifications", #"{"id":"loc","all":true,"alert":"c","localTime":{"time":"09:00"}}"#),
            ("la1", "live-activities/start", Self.start(id: "la1", token: token, at: later)),
        ]
        for job in jobs {
            let stored = try await post(job.path, job.body)
            #expect(stored.status == 202, "\(job.id): \(String(decoding: stored.body, as: UTF8.self))")
            let cancelled = try await s.request("DELETE", "/v1/apps/example/notifications/\(job.id)", key: "send")
            #expect(cancelled.status == 200, "\(job.id): \(String(decoding: cancelled.body, as: UTF8.self))")
            // Every kind of cancelled job is gone from its route alike (a local-time job too).
            let gone = try await s.request("GET", "/v1/apps/example/notifications/\(job.id)", key: "send")
            #expect(gone.status == 404 && gone.errorCode == "job_cancelled", "\(job.id): \(gone.status)")
        }
        let before = try blocking { try registry.broadcasts(app: "example", states: BroadcastState.allCases).count }
        for job in jobs {
            let requests = [
                (job.path, job.body),
                ("notifications", #"{"id":"\#(job.id)","all":true,"alert":"x"}"#),
                ("notifications", #"{"id":"\#(job.id)","tokens":["\#(token)"],"alert":"x"}"#),
                ("notifications", #"{"id":"\#(job.id)","all":true,"alert":"x","at":"\#(later)"}"#),
                ("notifications", #"{"id":"\#(job.id)","all":true,"alert":"x","localTime":{"time":"10:00"}}"#),
                ("live-activities/start", Self.start(id: job.id, token: token, at: nil)),
                ("live-activities/start", Self.start(id: job.id, token: token, at: later)),
            ]
            for (path, body) in requests {
                let r = try await post(path, body)
                #expect(r.status == 409 && r.errorCode == "job_cancelled", "\(job.id) \(body): \(r.status) \(String(decoding: r.body, as: UTF8.self))")
                #expect(r.json?["error"]?["message"]?.stringValue?.contains("was cancelled") == true)
            }
        }
        #expect(try blocking { try registry.broadcasts(app: "example", states: BroadcastState.allCases).count } == before)
        // A completed id: the same request again sends nothing; another job under it is id_conflict.
        let body = #"{"id":"done1","tokens":["\#(token)"],"alert":"d"}"#
        #expect(try await post("notifications", body).status == 202)
        _ = try await waitForState(s, "done1", ["completed"])
        let again = try await post("notifications", body)
        #expect(again.status == 202 && again.json?["state"]?.stringValue == "completed")
        let other = try await post("notifications", #"{"id":"done1","all":true,"alert":"other","localTime":{"time":"09:00"}}"#)
        #expect(other.status == 409 && other.errorCode == "id_conflict")
        // A window in which a wrongly re-run job would send: that nothing more arrives is what is tested.
        try await Task.sleep(for: .milliseconds(300))
        #expect(setup.simulator.received.count == 1)
        try await s.stop()
        try await setup.stop()
    }

    @Test func badJobsAreRejectedAndNothingIsStored() async throws {
        let setup = try await Setup.make()
        let (s, registry) = try await setup.server()
        let cases: [(String, String?, String, Int, String)] = [
            ("send", "application/json", #"{"tokens":["xyz"],"alert":"a"}"#, 400, "invalid_tokens"),
            ("send", "application/json", #"{"all":true,"channel":"x","alert":"a"}"#, 400, "invalid_target"),
            ("send", "application/json", #"{"all":true}"#, 400, "invalid_payload"),
            ("send", "application/json", #"{"all":true,"silent":true,"options":{"priority":10}}"#, 400, "invalid_payload"),
            ("send", "application/json", #"{"all":true,"alert":"a","colour":"red"}"#, 400, "invalid_field"),
            ("send", "application/json", #"{"all":true,"payload":{"aps":{"alert":"a"}},"alert":"b"}"#, 400, "invalid_payload"),
            ("send", "application/json", #"{"channel":"bad channel!","alert":"a"}"#, 400, "invalid_channel"),
            ("send", "text/plain", #"{"all":true,"alert":"a"}"#, 415, "unsupported_media_type"),
            ("reg", "application/json", #"{"all":true,"alert":"a"}"#, 403, "forbidden"),
            ("send", "application/json", #"{"all":true,"alert":"\#(String(repeating: "a", count: 70_000))"}"#, 413, "body_too_large"),
        ]
        for (key, type, body, status, code) in cases {
            let r = try await s.request("POST", "/v1/apps/example/notifications", key: key, contentType: type, body: body)
            #expect(r.status == status, "\(body.prefix(70))")
            #expect(r.errorCode == code, "\(body.prefix(70))")
        }
        let read1 = try await registry.run { [registry = registry] _ in try registry.broadcasts(states: BroadcastState.allCases) }
        #expect(read1.isEmpty)
        let missing = try await s.request("GET", "/v1/apps/example/notifications/nope", key: "send")
        #expect(missing.status == 404)
        try await s.stop()
        try await setup.stop()
    }

    @Test func jobsOfDifferentAppsRunAtTheSameTime() async throws {
        let setup = try await Setup.make(responseDelayMs: 300, secondApp: true)
        let (s, registry) = try await setup.server()
        _ = try setup.seed(registry, 400)
        _ = try setup.seed(registry, 400, app: "second")
        // A slow job for example, then one for second: second must not wait for example to finish.
        let first = try await s.request("POST", "/v1/apps/example/notifications", key: "send", contentType: "application/json",
                                        body: #"{"id":"slow","all":true,"alert":"a"}"#)
        let other = try await s.request("POST", "/v1/apps/second/notifications", key: "send2", contentType: "application/json",
                                        body: #"{"id":"other","all":true,"alert":"b"}"#)
        #expect(first.status == 202 && other.status == 202)
        let deadline = Date().addingTimeInterval(60)
        var overlap = false
        while Date() < deadline {
            let a = try await registry.run { [registry = registry] _ in try registry.broadcast(id: "slow") }?.state
            let b = try await registry.run { [registry = registry] _ in try registry.broadcast(id: "other") }?.state
            if a == .running && b == .running { overlap = true }
            if a == .completed && b == .completed { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(overlap, "the two apps' jobs never ran at the same time")
        let read2 = try await registry.run { [registry = registry] _ in try registry.broadcast(id: "slow") }
        #expect(read2?.state == .completed)
        let read3 = try await registry.run { [registry = registry] _ in try registry.broadcast(id: "other") }
        #expect(read3?.state == .completed)
        try await s.stop()
        try await setup.stop()
    }

    @Test func aJobInterruptedByRefusedCredentialsResumesWithTheSameRequestOnceTheyAreFixed() async throws {
        let setup = try await Setup.make()
        // The app's .p12 comes from another CA: the simulator refuses it in the TLS handshake.
        let certs = setup.dir + "/certs"
        let other = setup.dir + "/other"
        try DevCertificates.make(in: other, options: .init(topic: "com.example.app"))
        let fm = FileManager.default
        for name in ["client.p12", "client.p12.password"] {
            try fm.moveItem(atPath: certs + "/" + name, toPath: certs + "/" + name + ".good")
            try fm.copyItem(atPath: other + "/" + name, toPath: certs + "/" + name)
        }
        let (s, registry) = try await setup.server()
        let tokens = try setup.seed(registry, 200)
        let body = #"{"id":"creds","all":true,"alert":"Hello"}"#
        let r = try await s.request("POST", "/v1/apps/example/notifications", key: "send", contentType: "application/json", body: body)
        #expect(r.status == 202)
        let interrupted = try await waitForState(s, "creds", ["interrupted", "completed"])
        #expect(interrupted["state"]?.stringValue == "interrupted")
        #expect(interrupted["done"] == .int(0))
        #expect(interrupted["error"]?.stringValue?.contains("TLS") == true)
        #expect(setup.simulator.received.isEmpty)
        // The operator puts the right credentials in place and sends the same request again.
        for name in ["client.p12", "client.p12.password"] {
            try fm.removeItem(atPath: certs + "/" + name)
            try fm.moveItem(atPath: certs + "/" + name + ".good", toPath: certs + "/" + name)
        }
        let again = try await s.request("POST", "/v1/apps/example/notifications", key: "send", contentType: "application/json", body: body)
        #expect(again.status == 202)
        let status = try await waitForState(s, "creds", ["completed"])
        #expect(status["done"] == .int(200) && status["accepted"] == .int(200))
        #expect(Set(setup.simulator.received.map(\.request.token)) == Set(tokens))
        try await s.stop()
        try await setup.stop()
    }

    @Test func aJobInterruptedByARestartIsFinishedAfterIt() async throws {
        let setup = try await Setup.make(responseDelayMs: 2)
        var (s, registry) = try await setup.server()
        let tokens = try setup.seed(registry, 3000)
        let r = try await s.request("POST", "/v1/apps/example/notifications", key: "send", contentType: "application/json",
                                    body: #"{"id":"digest","all":true,"alert":"Digest"}"#)
        #expect(r.status == 202)
        // Let it get going, then restart the server (SIGTERM path: drain and checkpoint).
        try await waitUntil(deadline: .seconds(60), "300 devices done") {
            try await registry.run { [registry = registry] _ in try registry.broadcastCounts(id: "digest") }.done >= 300
        }
        try await s.stop()
        let stored = try await registry.run { [registry = registry] _ in try registry.broadcast(id: "digest") }
        let interrupted = try #require(stored)
        #expect(interrupted.state == .interrupted || interrupted.state == .completed)
        (s, registry) = try await setup.server()
        let status = try await waitForState(s, "digest", ["completed"])
        #expect(status["done"] == .int(3000))
        #expect(status["accepted"] == .int(3000))
        let received = setup.simulator.received.map(\.request.token)
        #expect(received.count == 3000)  // nobody got it twice
        #expect(Set(received) == Set(tokens))
        try await s.stop()
        try await setup.stop()
    }
}
