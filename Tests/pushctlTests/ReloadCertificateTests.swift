import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import PushCore
import Testing
import TestSupport

/// A renewed client certificate is picked up by `pushctl serve` on SIGHUP, without a restart: the simulator
/// reports which certificate each accepted notification came with (`clientCertificate` in its record).
@Suite(.timeLimit(.minutes(2))) struct ReloadCertificateTests {
    typealias World = BroadcastCommandTests.World

    /// The SHA-256 of a PEM certificate's DER, lowercase hex (what the simulator records).
    static func fingerprint(_ pem: String) throws -> String {
        let out = try openssl(["x509", "-in", pem, "-noout", "-fingerprint", "-sha256"])
        let hex = try #require(out.split(separator: "=").last).replacingOccurrences(of: ":", with: "")
        return hex.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
    }

    @discardableResult
    static func openssl(_ args: [String], in dir: String? = nil) throws -> String {
        let r = try ProcessRunner.runBlocking(
            URL(fileURLWithPath: "/usr/bin/openssl"), args, cwd: dir.map { URL(fileURLWithPath: $0) })
        guard r.status == 0 else { throw Failure("openssl \(args.joined(separator: " ")): \(r.stderr)") }
        return r.stdout
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ d: String) { description = d }
    }

    /// Renews `certs/client.p12` as an operator would: a new certificate for the same key and topic from the same
    /// CA (another serial, another validity), written to a temporary file and renamed over the old one, mode 0600.
    /// Returns the new certificate's fingerprint.
    static func renew(certs: String) throws -> String {
        try """
            basicConstraints = critical,CA:FALSE
            keyUsage = critical,digitalSignature
            extendedKeyUsage = clientAuth
            1.2.840.113635.100.6.3.1 = ASN1:NULL
            """.write(toFile: certs + "/renewed.ext", atomically: true, encoding: .utf8)
        try openssl(["req", "-new", "-key", "client.key", "-out", "renewed.csr",
                     "-subj", "/UID=com.example.app/CN=Apple Development IOS Push Services: com.example.app/OU=DEVTEAM123/O=PushProvider Development/C=US"], in: certs)
        try openssl(["x509", "-req", "-in", "renewed.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-set_serial", "424242",
                     "-days", "30", "-extfile", "renewed.ext", "-out", "renewed.pem"], in: certs)
        try openssl(["pkcs12", "-export", "-inkey", "client.key", "-in", "renewed.pem", "-out", "renewed.p12",
                     "-passout", "file:client.p12.password"], in: certs)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: certs + "/renewed.p12")
        guard rename(certs + "/renewed.p12", certs + "/client.p12") == 0 else { throw Failure("rename: errno \(errno)") }
        return try fingerprint(certs + "/renewed.pem")
    }

    static func call(_ method: String, _ url: String, key: String, body: String? = nil) async throws -> (Int, JSONValue?) {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = method
        request.setValue("Bearer \(key)", forHTTPHeaderField: "Authorization")
        if let body {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = Data(body.utf8)
        }
        let (data, response) = try await URLSession.shared.answer(for: request)
        return (response.statusCode, try? JSONValue(parsing: String(decoding: data, as: UTF8.self)))
    }

    @Test func serveSendsWithTheRenewedCertificateAfterSIGHUPAndTheSendInFlightDuringTheReloadCompletes() async throws {
        // Every answer of the simulator waits 3 s: a send is in flight for that long once the simulator has it.
        var w = try await World.make(tokens: 0, delayMs: 3000)
        defer { w.stop() }
        let certs = w.dir.appendingPathComponent("certs").path
        let key = try await ReloadCommandTests.newKey(config: w.config)
        let port = try BroadcastCommandTests.freePort()
        // The world's configuration (certificate A) with an API listener and the key.
        var text = try String(contentsOfFile: w.config, encoding: .utf8)
        text = text.replacingOccurrences(
            of: #"{"database":"#, with: #"{"server": {"host": "127.0.0.1", "port": \#(port), "admin": {"host": "127.0.0.1", "port": \#(port)}}, "database":"#)
        text = text.replacingOccurrences(
            of: #""topic": "com.example.app","#, with: #""topic": "com.example.app", "sendKeys": ["\#(key.hash)"],"#)
        // The world's simulator process (recording) as the app's endpoint: serve starts no simulator of its own.
        text = text.replacingOccurrences(
            of: #""endpoint": "simulator""#, with: #""endpoint": "https://127.0.0.1:\#(w.port)", "caFile": "certs/ca.pem""#)
        #expect(text.contains(key.hash) && text.contains("\"server\"") && text.contains("caFile"))
        let config = w.dir.appendingPathComponent("serve.json").path
        try text.write(toFile: config, atomically: true, encoding: .utf8)
        let certificateA = try Self.fingerprint(certs + "/client.pem")

        let serve = try CLI.startCapturing(["serve", "--config", config])
        defer { serve.stop() }
        try await waitUntil(deadline: .seconds(60), "serve listening") {
            serve.stdoutText.contains("PushProvider is listening") || !serve.isRunning
        }
        guard serve.isRunning else {
            Issue.record("serve ended: \(serve.stderrText)")
            return
        }
        let base = "http://127.0.0.1:\(port)/v1/apps/example/notifications"
        func send(_ id: String, token: Int) async throws {
            let (status, body) = try await Self.call(
                "POST", base, key: key.key, body: #"{"id":"\#(id)","tokens":["\#(World.token(token))"],"alert":"\#(id)"}"#)
            #expect(status == 202, "\(String(describing: body)) \(serve.stderrText)")
        }
        func job(_ id: String) async throws -> JSONValue? { try await Self.call("GET", "\(base)/\(id)", key: key.key).1 }
        func completed(_ id: String) async throws {
            try await waitUntil(deadline: .seconds(60), "job \(id) completed") { try await job(id)?["state"]?.stringValue == "completed" }
            #expect(try await job(id)?["accepted"]?.intValue == 1, "\(serve.stderrText)")
        }
        func certificate(ofRecord n: Int) throws -> String? { try w.records()[n]["clientCertificate"]?.stringValue }

        try await send("before", token: 1)
        try await completed("before")
        #expect(try certificate(ofRecord: 0) == certificateA)

        // The certificate is renewed on disk: nothing changes until the reload (the app's sender is long-lived).
        let certificateB = try Self.renew(certs: certs)
        #expect(certificateB != certificateA)
        // A send the simulator holds (its answer 3 s away; the simulator records a notification when it answers)
        // when the server reloads.
        try await send("during", token: 2)
        try await waitUntil("job during running") { try await job("during")?["state"]?.stringValue == "running" }
        kill(serve.process.processIdentifier, SIGHUP)
        try await ReloadCommandTests.waitForLog(serve, "configuration reloaded from")
        let atReload = try await job("during")
        #expect(atReload?["state"]?.stringValue == "running", "the reload landed while the send was in flight: \(String(describing: atReload))")
        try await completed("during")
        #expect(try certificate(ofRecord: 1) == certificateA, "a job in flight finishes on the sender it started with")

        // The next send, without a restart, comes with the renewed certificate.
        try await send("after", token: 3)
        try await completed("after")
        #expect(try certificate(ofRecord: 2) == certificateB, "\(serve.stderrText)")
        #expect(serve.isRunning && !serve.stderrText.contains("reload refused"), "\(serve.stderrText)")
    }
}
