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
        #expect(r.stdout.contains("ok    app example credentials: certificate (.p12)"), "\(r.stdout)")
        #expect(r.stdout.contains("development, topics com.example.app"), "\(r.stdout)")
        #expect(r.stdout.contains("ok    app example endpoint: https://127.0.0.1:\(simulator.port) answered HTTP "), "\(r.stdout)")
        #expect(r.stdout.contains("root: ") && r.stdout.contains("PushProvider Development CA"), "\(r.stdout)")
        #expect(r.stdout.contains("ok    app example clock: this host's clock is"), "\(r.stdout)")
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
        #expect(r.stdout.contains("ok    app example credentials: certificate (.p12)"), "\(r.stdout)")
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
        let line = r.stdout.split(separator: "\n").first { $0.hasPrefix("FAIL  app example credentials: ") }
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
        let system = lines.first { $0.hasPrefix("FAIL  app system endpoint: ") }
        #expect(system?.contains("the system trust store lacks the root of this endpoint's chain") == true, "\(r.stdout)")
        #expect(system?.contains("USERTrust RSA") == true, "\(r.stdout)")
        let mismatch = lines.first { $0.hasPrefix("FAIL  app mismatch endpoint: ") }
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
        let line = r.stdout.split(separator: "\n").first { $0.hasPrefix("FAIL  app example clock: ") }.map(String.init) ?? ""
        #expect(line.contains("s behind https://127.0.0.1:\(simulator.port)'s Date"), "\(r.stdout)")
        #expect(["299 s", "300 s", "301 s"].contains { line.contains("clock is \($0) behind") }, "\(r.stdout)")
        #expect(r.stdout.contains("ok    app example endpoint: "), "only the clock fails: \(r.stdout)")
    }
}
