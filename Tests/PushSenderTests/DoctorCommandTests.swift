import Foundation
import PushCore
import PushSender
import Testing
import TestSupport

/// `pushctl doctor` against the simulator (the `pushctl simulator` process): a good setup passes; an expired
/// certificate, an endpoint the trust in use does not verify, and a server whose clock is off each fail clearly.
@Suite(.timeLimit(.minutes(2))) struct DoctorCommandTests {
    /// A `pushctl simulator` on a free port with the dev PKI in `certificates`, stopped by ``stop()``.
    struct Simulator {
        let process: ChildProcess
        let port: Int

        init(certificates: String, extra: [String] = []) throws {
            let binary = try #require(CredentialFixture.pushctlPath, "build pushctl first (swift build)")
            let dir = try CredentialFixture.temporaryDirectory("doctor-simulator")
            let out = dir + "/stdout"
            var environment = ProcessInfo.processInfo.environment
            environment.removeValue(forKey: "PUSHCTL_CONFIG")
            process = try ChildProcess(
                binary, ["simulator", "--port", "0", "--certificates", certificates, "--client-auth", "either"] + extra,
                stdoutPath: out, environment: environment, cwd: dir)  // no Config/pushctl.json in dir: the defaults
            let deadline = Date().addingTimeInterval(30)
            var port: Int?
            while Date() < deadline, process.isRunning, port == nil {
                let text = (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
                if let range = text.range(of: "listening on https://127.0.0.1:") {
                    port = Int(text[range.upperBound...].prefix { $0.isNumber })
                } else {
                    usleep(20_000)
                }
            }
            guard let port else {
                process.kill()
                throw TestPKIError(message: "the simulator did not start")
            }
            self.port = port
        }

        func stop() {
            process.stop()
        }
    }

    /// A configuration in `dir` whose apps are `apps` (id → JSON), with the simulator block naming `port`.
    static func config(in dir: String, port: Int, certificates: String, apps: [String: String]) throws -> String {
        let path = dir + "/pushctl.json"
        let body = apps.sorted { $0.key < $1.key }.map { "\"\($0.key)\": \($0.value)" }.joined(separator: ",\n")
        try """
            {"database": "registry.sqlite",
             "simulator": {"host": "127.0.0.1", "port": \(port), "certificates": "\(certificates)"},
             "apps": {\(body)}}
            """.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// An app on the simulator with the .p12 of `pki`, in the `apns` section (`flat`: the older form).
    static func certificateApp(_ pki: DevCertificates, endpoint: String = "simulator", caFile: String? = nil, flat: Bool = false) -> String {
        let keys = """
            "topic": "com.example.app", "endpoint": "\(endpoint)",\(caFile.map { " \"caFile\": \"\($0)\"," } ?? "")
             "auth": {"p12": "\(pki.path("client.p12"))", "passwordFile": "\(pki.path("client.p12.password"))"}
            """
        return flat ? "{\(keys)}" : #"{"apns": {\#(keys)}}"#
    }

    func doctor(_ config: String, json: Bool = false) throws -> ProcessResult {
        let binary = try #require(CredentialFixture.pushctlPath, "build pushctl first (swift build)")
        return try runProcess(binary, ["doctor", "--config", config] + (json ? ["--json"] : []), timeout: 60)
    }

    @Test func aGoodSetupPassesEveryCheckAndNamesTheRootAndTheClock() throws {
        let pki = try CredentialFixture.make()
        let simulator = try Simulator(certificates: pki.path(""))
        defer { simulator.stop() }
        let dir = try CredentialFixture.temporaryDirectory()
        let config = try Self.config(in: dir, port: simulator.port, certificates: pki.path(""), apps: ["example": Self.certificateApp(pki)])
        let r = try doctor(config)
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
        #expect(r.stdout.contains("ok    configuration: \(config): 1 apps"), "\(r.stdout)")
        #expect(r.stdout.contains("ok    app example apns credentials: certificate (.p12)"), "\(r.stdout)")
        #expect(r.stdout.contains("development, topics com.example.app"), "\(r.stdout)")
        #expect(r.stdout.contains("ok    app example apns endpoint: https://127.0.0.1:\(simulator.port) answered HTTP "), "\(r.stdout)")
        #expect(r.stdout.contains("root: ") && r.stdout.contains("PushProvider Development CA"), "\(r.stdout)")
        #expect(r.stdout.contains("ok    app example apns clock: this host's clock is"), "\(r.stdout)")
        #expect(r.stdout.contains("ok    database: "), "\(r.stdout)")
        #expect(r.stdout.contains("schema version "), "\(r.stdout)")

        let j = try doctor(config, json: true)
        #expect(j.status == 0, "\(j.stderr)")
        guard case .array(let checks) = try JSONValue(parsing: Array(j.stdout.utf8)) else {
            Issue.record("not an array: \(j.stdout)")
            return
        }
        #expect(checks.count == 5)
        #expect(checks.allSatisfy { $0["status"] == .string("ok") }, "\(j.stdout)")
    }

    @Test func flatAPNsKeysPassWithANoticeNamingTheSection() throws {
        let pki = try CredentialFixture.make()
        let simulator = try Simulator(certificates: pki.path(""))
        defer { simulator.stop() }
        let dir = try CredentialFixture.temporaryDirectory()
        let config = try Self.config(
            in: dir, port: simulator.port, certificates: pki.path(""), apps: ["example": Self.certificateApp(pki, flat: true)])
        let r = try doctor(config)
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
        let notice = r.stdout.split(separator: "\n").filter { $0.hasPrefix("ok    app example configuration: notice: ") }
        #expect(notice.count == 1 && notice.first?.contains("move them into apps.example.apns") == true, "\(r.stdout)")
        #expect(r.stdout.contains("ok    app example apns credentials: certificate (.p12)"), "\(r.stdout)")
    }

    @Test func anExpiredCertificateFails() throws {
        let pki = try CredentialFixture.make()
        let old = try CredentialFixture.make(days: 30, now: Date().addingTimeInterval(-100 * 86_400))
        let simulator = try Simulator(certificates: pki.path(""))
        defer { simulator.stop() }
        let dir = try CredentialFixture.temporaryDirectory()
        let config = try Self.config(in: dir, port: simulator.port, certificates: pki.path(""), apps: ["example": Self.certificateApp(old)])
        let r = try doctor(config)
        #expect(r.status == 1, "\(r.stdout)\(r.stderr)")
        let line = r.stdout.split(separator: "\n").first { $0.hasPrefix("FAIL  app example apns credentials: ") }
        #expect(line?.contains("expired") == true, "\(r.stdout)")
    }

    @Test func anEndpointTheTrustInUseDoesNotVerifyFailsSayingWhichTrust() throws {
        let pki = try CredentialFixture.make()
        let stranger = try CredentialFixture.make(label: "doctor-stranger")
        let simulator = try Simulator(certificates: pki.path(""))
        defer { simulator.stop() }
        let dir = try CredentialFixture.temporaryDirectory()
        let config = try Self.config(in: dir, port: simulator.port, certificates: pki.path(""), apps: [
            // The system's store does not hold the simulator's development CA.
            "system": Self.certificateApp(pki, endpoint: "https://127.0.0.1:\(simulator.port)"),
            // A caFile naming a CA that did not sign the simulator's certificate.
            "mismatch": Self.certificateApp(pki, caFile: stranger.path("ca.pem")),
        ])
        let r = try doctor(config)
        #expect(r.status == 1, "\(r.stdout)\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        let system = lines.first { $0.hasPrefix("FAIL  app system apns endpoint: ") }
        #expect(system?.contains("the system trust store lacks the root of this endpoint's chain") == true, "\(r.stdout)")
        #expect(system?.contains("USERTrust RSA") == true, "\(r.stdout)")
        let mismatch = lines.first { $0.hasPrefix("FAIL  app mismatch apns endpoint: ") }
        #expect(mismatch?.contains("does not end at the CA in caFile \(stranger.path("ca.pem"))") == true, "\(r.stdout)")
    }

    @Test func aServerClockFiveMinutesAheadFailsNamingTheSkew() throws {
        let pki = try CredentialFixture.make()
        let simulator = try Simulator(certificates: pki.path(""), extra: ["--date-skew-seconds", "300"])
        defer { simulator.stop() }
        let dir = try CredentialFixture.temporaryDirectory()
        let config = try Self.config(in: dir, port: simulator.port, certificates: pki.path(""), apps: ["example": Self.certificateApp(pki)])
        let r = try doctor(config)
        #expect(r.status == 1, "\(r.stdout)\(r.stderr)")
        let line = r.stdout.split(separator: "\n").first { $0.hasPrefix("FAIL  app example apns clock: ") }.map(String.init) ?? ""
        #expect(line.contains("s behind https://127.0.0.1:\(simulator.port)'s Date"), "\(r.stdout)")
        #expect(["299 s", "300 s", "301 s"].contains { line.contains("clock is \($0) behind") }, "\(r.stdout)")
        #expect(r.stdout.contains("ok    app example apns endpoint: "), "only the clock fails: \(r.stdout)")
    }

    // MARK: Every service of an app

    /// The files of an app with all three services on the simulator: the dev PKI, a VAPID key (`vapid` replaces it)
    /// and the FCM service account the simulator was started to trust.
    struct ThreeServices {
        let pki: DevCertificates
        let simulator: Simulator
        let dir: String
        let account: String

        init(extraHosts: [String] = []) throws {
            pki = try CredentialFixture.make()
            dir = try CredentialFixture.temporaryDirectory("doctor-services")
            account = dir + "/fcm-account.json"
            // The simulator writes a development account there and trusts it (token_uri: its /token).
            simulator = try Simulator(certificates: pki.path(""), extra: ["--fcm-service-account", account])
            let binary = try #require(CredentialFixture.pushctlPath)
            let key = try runProcess(binary, ["webpush", "key", "new", "--out", dir + "/vapid.pem"], timeout: 30)
            guard key.status == 0 else { throw TestPKIError(message: "webpush key new: \(key.stderr)") }
        }

        /// The app's JSON: APNs (.p12), Web Push allowed to the simulator (plus `extraHosts`) and FCM on the simulator.
        func app(vapidKey: String? = nil, serviceAccount: String? = nil, extraHosts: [String] = []) -> String {
            let hosts = (["127.0.0.1:\(simulator.port)"] + extraHosts).map { "\"\($0)\"" }.joined(separator: ", ")
            return """
                {"apns": {"topic": "com.example.app", "endpoint": "simulator",
                          "auth": {"p12": "\(pki.path("client.p12"))", "passwordFile": "\(pki.path("client.p12.password"))"}},
                 "webpush": {"vapidKey": "\(vapidKey ?? dir + "/vapid.pem")", "subject": "mailto:ops@example.com",
                             "allowedHosts": [\(hosts)], "caFile": "\(pki.path("ca.pem"))"},
                 "fcm": {"serviceAccount": "\(serviceAccount ?? account)", "endpoint": "simulator"}}
                """
        }

        func config(_ app: String) throws -> String {
            try DoctorCommandTests.config(in: dir, port: simulator.port, certificates: pki.path(""), apps: ["example": app])
        }
    }

    /// Lines of `stdout` starting with `prefix`.
    static func lines(_ stdout: String, _ prefix: String) -> [String] {
        stdout.split(separator: "\n").map(String.init).filter { $0.hasPrefix(prefix) }
    }

    @Test func anAppWithEveryServiceGetsLinesForEachAndPassesOfflineWithTheDefaultPushServicesOnlyWarned() throws {
        let world = try ThreeServices()
        defer { world.simulator.stop() }
        let config = try world.config(world.app())
        let r = try doctor(config)
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
        let port = world.simulator.port
        for line in [
            "ok    app example apns credentials: certificate (.p12)",
            "ok    app example apns endpoint: https://127.0.0.1:\(port) answered HTTP ",
            "ok    app example webpush key: \(world.dir)/vapid.pem: a P-256 key",
            "ok    app example webpush subject: mailto:ops@example.com",
            "ok    app example webpush host 127.0.0.1:\(port): https://127.0.0.1:\(port) answered HTTP ",
            "ok    app example webpush hosts *.push.apple.com, *.notify.windows.com: wildcards, not probed",
            "ok    app example fcm account: \(world.account): project ",
            "ok    app example fcm grant: https://127.0.0.1:\(port)/token granted an access token",
        ] {
            #expect(Self.lines(r.stdout, line).count == 1, "\(line)\n\(r.stdout)")
        }
        // The default push services: probed, and at most a warning on a machine that cannot reach them.
        for host in ["fcm.googleapis.com", "updates.push.services.mozilla.com"] {
            let line = Self.lines(r.stdout, "").first { $0.contains(" app example webpush host \(host): ") }
            #expect(line?.hasPrefix("ok    ") == true || line?.hasPrefix("warn  ") == true, "\(host)\n\(r.stdout)")
        }
        #expect(!r.stdout.contains("FAIL"), "\(r.stdout)")
    }

    /// An Android app with UnifiedPush only: its VAPID key (a P-256 key, its mode), its subject and its exempt hosts
    /// get a line each, and no distributor is probed (each user picks their own), which its line says. A key that is
    /// not P-256, or one other users can read, fails by name.
    @Test func aUnifiedPushAppGetsItsKeySubjectAndExemptHostsCheckedAndNoDistributorProbed() throws {
        let pki = try CredentialFixture.make()
        let dir = try CredentialFixture.temporaryDirectory("doctor-unifiedpush")
        let binary = try #require(CredentialFixture.pushctlPath)
        let made = try runProcess(binary, ["webpush", "key", "new", "--out", dir + "/vapid.pem"], timeout: 30)
        #expect(made.status == 0, "\(made.stderr)")
        let publicKey = made.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        func app(_ key: String) -> String {
            #"{"unifiedpush": {"vapidKey": "\#(key)", "subject": "mailto:ops@example.com", "exemptHosts": ["ntfy.internal:8080", "10.1.0.0/16"]}}"#
        }
        let r = try doctor(try Self.config(in: dir, port: 1, certificates: pki.path(""), apps: ["android": app(dir + "/vapid.pem")]))
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
        for line in [
            "ok    app android unifiedpush key: \(dir)/vapid.pem: a P-256 key, readable by no other user; apps register with their distributor with its public key (the vapid) \(publicKey.prefix(12))…",
            "ok    app android unifiedpush subject: mailto:ops@example.com",
            "ok    app android unifiedpush distributors: not probed: each user picks their own distributor",
        ] {
            #expect(Self.lines(r.stdout, line).count == 1, "\(line)\n\(r.stdout)")
        }
        #expect(Self.lines(r.stdout, "ok    app android unifiedpush distributors: ").first?
            .hasSuffix("exempt from the address check: ntfy.internal:8080, 10.1.0.0/16") == true, "\(r.stdout)")

        let p384 = dir + "/p384.pem"
        let ec = try runProcess("/usr/bin/openssl", ["ecparam", "-name", "secp384r1", "-genkey", "-noout", "-out", p384], timeout: 30)
        #expect(ec.status == 0 && chmod(p384, 0o600) == 0, "\(ec.stderr)")
        let wrong = try doctor(try Self.config(in: dir, port: 1, certificates: pki.path(""), apps: ["android": app(p384)]))
        #expect(wrong.status == 1, "\(wrong.stdout)")
        #expect(Self.lines(wrong.stdout, "FAIL  ") == Self.lines(wrong.stdout, "FAIL  app android unifiedpush key: apps.android.unifiedpush.vapidKey: \(p384) is not a P-256 private key"), "\(wrong.stdout)")
        #expect(Self.lines(wrong.stdout, "FAIL  ").count == 1, "\(wrong.stdout)")
        #expect(Self.lines(wrong.stdout, "ok    app android unifiedpush subject: ").count == 1, "\(wrong.stdout)")

        #expect(chmod(dir + "/vapid.pem", 0o644) == 0)
        let readable = try doctor(try Self.config(in: dir, port: 1, certificates: pki.path(""), apps: ["android": app(dir + "/vapid.pem")]))
        #expect(readable.status == 1, "\(readable.stdout)")
        #expect(Self.lines(readable.stdout, "FAIL  ").contains { $0.contains("\(dir)/vapid.pem") }, "\(readable.stdout)")
    }

    @Test func aVAPIDKeyThatIsNotP256FailsByNameWhileTheOtherChecksStillReport() throws {
        let world = try ThreeServices()
        defer { world.simulator.stop() }
        let p384 = world.dir + "/p384.pem"
        let made = try runProcess("/usr/bin/openssl", ["ecparam", "-name", "secp384r1", "-genkey", "-noout", "-out", p384], timeout: 30)
        #expect(made.status == 0, "\(made.stderr)")
        #expect(chmod(p384, 0o600) == 0)
        let r = try doctor(try world.config(world.app(vapidKey: p384)))
        #expect(r.status == 1, "\(r.stdout)\(r.stderr)")
        let failed = Self.lines(r.stdout, "FAIL  ")
        #expect(failed.count == 1, "\(r.stdout)")
        #expect(failed.first?.hasPrefix("FAIL  app example webpush key: apps.example.webpush.vapidKey: \(p384) is not a P-256 private key") == true, "\(r.stdout)")
        #expect(Self.lines(r.stdout, "ok    app example apns endpoint: ").count == 1, "\(r.stdout)")
        #expect(Self.lines(r.stdout, "ok    app example webpush host 127.0.0.1:").count == 1, "\(r.stdout)")
        #expect(Self.lines(r.stdout, "ok    app example fcm grant: ").count == 1, "\(r.stdout)")
        #expect(Self.lines(r.stdout, "ok    database: ").count == 1, "\(r.stdout)")
    }

    @Test func anFCMAccountWhoseGrantTheTokenEndpointRefusesFailsByNameWhileTheOtherChecksStillReport() throws {
        let world = try ThreeServices()
        defer { world.simulator.stop() }
        // A well-formed account the simulator's token endpoint does not know (as Google's for a deleted key).
        let stranger = world.dir + "/stranger.json"
        let binary = try #require(CredentialFixture.pushctlPath)
        let made = try runProcess(binary, ["fcm", "account", "new", "--out", stranger], timeout: 30)
        #expect(made.status == 0, "\(made.stderr)")
        let r = try doctor(try world.config(world.app(serviceAccount: stranger)))
        #expect(r.status == 1, "\(r.stdout)\(r.stderr)")
        let failed = Self.lines(r.stdout, "FAIL  ")
        #expect(failed.count == 1, "\(r.stdout)")
        let port = world.simulator.port
        #expect(failed.first?.hasPrefix("FAIL  app example fcm grant: https://127.0.0.1:\(port)/token refused the grant (HTTP 400)") == true, "\(r.stdout)")
        #expect(Self.lines(r.stdout, "ok    app example fcm account: \(stranger)").count == 1, "\(r.stdout)")
        #expect(Self.lines(r.stdout, "ok    app example webpush key: ").count == 1, "\(r.stdout)")
        #expect(Self.lines(r.stdout, "ok    app example apns endpoint: ").count == 1, "\(r.stdout)")
    }

    @Test func anExactlyListedPushServiceHostThatDoesNotAnswerFailsByNameWhileTheOtherChecksStillReport() throws {
        let world = try ThreeServices()
        defer { world.simulator.stop() }
        // A port nothing listens on: bound, then closed.
        let closed = try PostgresTestServer.freePort()
        let r = try doctor(try world.config(world.app(extraHosts: ["127.0.0.1:\(closed)"])))
        #expect(r.status == 1, "\(r.stdout)\(r.stderr)")
        let failed = Self.lines(r.stdout, "FAIL  ")
        #expect(failed.count == 1, "\(r.stdout)")
        #expect(failed.first?.hasPrefix("FAIL  app example webpush host 127.0.0.1:\(closed): https://127.0.0.1:\(closed): ") == true, "\(r.stdout)")
        #expect(failed.first?.contains("listed exactly in apps.example.webpush.allowedHosts") == true, "\(r.stdout)")
        #expect(Self.lines(r.stdout, "ok    app example webpush host 127.0.0.1:\(world.simulator.port): ").count == 1, "\(r.stdout)")
        #expect(Self.lines(r.stdout, "ok    app example fcm grant: ").count == 1, "\(r.stdout)")
        #expect(Self.lines(r.stdout, "ok    app example apns endpoint: ").count == 1, "\(r.stdout)")
    }

    @Test func aConfigurationWithAnAppThatDoesNotLoadFailsByNameAndTheOtherAppsAreStillChecked() throws {
        let world = try ThreeServices()
        defer { world.simulator.stop() }
        let config = try DoctorCommandTests.config(
            in: world.dir, port: world.simulator.port, certificates: world.pki.path(""),
            apps: ["example": world.app(), "typo": #"{"fcm": {"serviceAcount": "x.json", "endpoint": "simulator"}}"#])
        let r = try doctor(config)
        #expect(r.status == 1, "\(r.stdout)\(r.stderr)")
        let failed = Self.lines(r.stdout, "FAIL  ")
        #expect(failed.count == 1, "\(r.stdout)")
        #expect(failed.first?.hasPrefix("FAIL  configuration: \(config): apps.typo") == true, "\(r.stdout)")
        #expect(failed.first?.hasSuffix("checking the apps that load on their own (example)") == true, "\(r.stdout)")
        #expect(Self.lines(r.stdout, "ok    app example fcm grant: ").count == 1, "\(r.stdout)")
        #expect(Self.lines(r.stdout, "ok    app example webpush key: ").count == 1, "\(r.stdout)")
        #expect(Self.lines(r.stdout, "ok    database: ").count == 1, "\(r.stdout)")
    }

    @Test func theStandaloneSimulatorTrustsTheFCMAccountsOfItsConfigurationSoTheirGrantsPass() throws {
        let pki = try CredentialFixture.make()
        let dir = try CredentialFixture.temporaryDirectory("doctor-standalone")
        let binary = try #require(CredentialFixture.pushctlPath)
        let made = try runProcess(binary, ["fcm", "account", "new", "--out", dir + "/account.json"], timeout: 30)
        #expect(made.status == 0, "\(made.stderr)")
        // The configuration names the simulator's port, so the simulator and doctor meet there (free beforehand;
        // another process may take it first, then the simulator does not start and this picks another).
        var simulator: ChildProcess?, config = "", out = ""
        for _ in 1...5 {
            let port = try PostgresTestServer.freePort()
            config = try Self.config(
                in: dir, port: port, certificates: pki.path(""),
                apps: ["android": #"{"fcm": {"serviceAccount": "\#(dir)/account.json", "endpoint": "simulator"}}"#])
            out = dir + "/simulator-\(port).out"
            let process = try ChildProcess(binary, ["simulator", "--config", config, "--client-auth", "either"], stdoutPath: out, cwd: dir)
            let deadline = Date().addingTimeInterval(30)
            while Date() < deadline, process.isRunning,
                !((try? String(contentsOfFile: out, encoding: .utf8)) ?? "").contains("listening on") {
                usleep(20_000)
            }
            if process.isRunning { simulator = process; break }
        }
        let running = try #require(simulator, "the simulator did not start")
        defer { running.stop() }
        let text = (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
        #expect(text.contains("simulator: FCM service account from apps.android.fcm.serviceAccount"), "\(text)")
        let r = try doctor(config)
        #expect(Self.lines(r.stdout, "ok    app android fcm grant: ").count == 1, "\(r.stdout)")
    }
}
