import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import PushProviderClient
import Testing
import TestSupport

/// A real `pushctl serve` for the client's tests: the built binary, on a free loopback port (one listener: the
/// admin address is the public one), app `example` on a development .p8 key (never contacted: nothing is sent),
/// a registration key and a send key, and a user secret for `userAuth` — on SQLite or on a fresh database of the
/// test PostgreSQL server. ``stop()`` and ``start()`` take it down and bring it back on the same port and data (an
/// outage, as the app sees it); ``finish()`` stops it and removes its directory.
final class ServedPushctl: @unchecked Sendable {
    /// The registry backend.
    enum Backend: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case sqlite, postgres
        var testDescription: String { rawValue }
    }

    let dir: URL
    let port: Int
    let registrationKey: String
    let sendKey: String
    let userSecret: String
    private let lock = NSLock()
    /// One URLSession for the tests' own requests (health checks, look-ups with the send key).
    private static let http = URLSessionTransport()
    private var process: Process?

    /// The public listener.
    var url: URL { URL(string: "http://127.0.0.1:\(port)")! }
    /// The configuration file.
    var configPath: String { dir.appendingPathComponent("pushctl.json").path }
    /// The client's configuration for app `example` with the registration key.
    var client: ClientConfiguration { client(at: url) }

    /// The client's configuration for app `example` with the registration key, reaching the server at `url` (a
    /// front server that forwards to it).
    func client(at url: URL) -> ClientConfiguration {
        ClientConfiguration(serverURL: url, app: "example", registrationKey: registrationKey)
    }

    private init(dir: URL, port: Int, registrationKey: String, sendKey: String, userSecret: String) {
        self.dir = dir
        self.port = port
        self.registrationKey = registrationKey
        self.sendKey = sendKey
        self.userSecret = userSecret
    }

    /// Writes a configuration and starts the server.
    static func start(_ backend: Backend) async throws -> ServedPushctl {
        guard BuiltPushctl.isBuilt else { throw ServeFailure("pushctl is not built (swift build --build-tests)") }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("pushctl-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let server = ServedPushctl(
            dir: dir, port: try PostgresTestServer.freePort(), registrationKey: "reg-" + UUID().uuidString,
            sendKey: "send-" + UUID().uuidString, userSecret: UUID().uuidString)
        do {
            let made = try await ProcessRunner.run(
                BuiltPushctl.url, ["cert", "make-dev", "--out", dir.appendingPathComponent("certs").path, "--topic", "com.example.app"])
            guard made.status == 0 else { throw ServeFailure("pushctl cert make-dev: \(made.stderr)") }
            let secretPath = dir.appendingPathComponent("user.secret").path
            try (server.userSecret + "\n").write(toFile: secretPath, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: secretPath)
            let database = backend == .sqlite ? "registry.sqlite" : try PostgresTestServer.shared().makeDatabase("client")
            try """
                {"database": "\(database)",
                 "server": {"host": "127.0.0.1", "port": \(server.port), "admin": {"host": "127.0.0.1", "port": \(server.port)}},
                 "apps": {"example": {"topic": "com.example.app", "endpoint": "development",
                   "auth": {"p8": "certs/AuthKey_DEVKEY1234.p8", "keyId": "DEVKEY1234", "teamId": "DEVTEAM123"},
                   "registrationKeys": ["sha256:\(try await openssl(["dgst", "-sha256"], server.registrationKey))"],
                   "sendKeys": ["sha256:\(try await openssl(["dgst", "-sha256"], server.sendKey))"],
                   "userSecretFile": "user.secret"}}}
                """.write(toFile: server.configPath, atomically: true, encoding: .utf8)
            try await server.start()
        } catch {
            server.finish()
            throw error
        }
        return server
    }

    /// Starts (again) `pushctl serve` on the configuration and waits until it answers `/healthz`.
    func start() async throws {
        let process = Process()
        process.executableURL = BuiltPushctl.url
        process.arguments = ["serve", "--config", configPath]
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "PUSHCTL_CONFIG")
        process.environment = environment
        let log = dir.appendingPathComponent("serve.log")
        if !FileManager.default.fileExists(atPath: log.path) { _ = FileManager.default.createFile(atPath: log.path, contents: nil) }
        let handle = try FileHandle(forWritingTo: log)
        handle.seekToEndOfFile()
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        try process.run()
        lock.withLock { self.process = process }
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            guard process.isRunning else { throw ServeFailure("pushctl serve exited: \(self.log)") }
            if let answer = try? await Self.http.send(HTTPRequest(method: "GET", url: url.appendingPathComponent("healthz"), timeout: 2)),
                answer.status == 200 || answer.status == 503
            {
                return
            }
            try await Task.sleep(nanoseconds: 50_000_000)
        }
        throw ServeFailure("pushctl serve did not answer within 60 s: \(self.log)")
    }

    /// Stops the server (SIGTERM, waiting for it to exit).
    func stop() {
        let running = lock.withLock { () -> Process? in defer { process = nil }; return process }
        guard let running, running.isRunning else { return }
        running.terminate()
        running.waitUntilExit()
    }

    /// Stops it and removes its directory.
    func finish() {
        stop()
        try? FileManager.default.removeItem(at: dir)
    }

    /// What the server printed.
    var log: String { (try? String(contentsOf: dir.appendingPathComponent("serve.log"), encoding: .utf8)) ?? "" }

    /// The proof the app's backend issues for `user`: HMAC-SHA256 under the user secret, made with the openssl
    /// command README's "Users, safely" shows (so the README's recipe is what the server accepts).
    func userAuth(_ user: String) async throws -> String {
        try await Self.openssl(["dgst", "-sha256", "-hmac", userSecret], user)
    }

    /// `GET path` with the send key: the status and the JSON object answered.
    func get(_ path: String) async throws -> (status: Int, json: [String: Any]) {
        let answer = try await Self.http.send(HTTPRequest(
            method: "GET", url: URL(string: url.absoluteString + path)!, headers: ["Authorization": "Bearer \(sendKey)"]))
        let json = (try? JSONSerialization.jsonObject(with: answer.body)) as? [String: Any] ?? [:]
        return (answer.status, json)
    }

    /// The tokens of `user`'s devices, as the server lists them (`GET …/users/{user}/devices`).
    func devices(ofUser user: String) async throws -> [[String: Any]] {
        let (status, json) = try await get("/v1/apps/example/users/\(user)/devices")
        #expect(status == 200, "\(json)")
        return json["devices"] as? [[String: Any]] ?? []
    }

    /// The status of `GET …/devices/{token}` and its body.
    func device(_ token: String) async throws -> (status: Int, json: [String: Any]) {
        try await get("/v1/apps/example/devices/\(token)")
    }

    /// Runs `pushctl args… --config <this>` (e.g. to list Live Activity tokens).
    func pushctl(_ args: [String]) async throws -> ProcessOutcome {
        try await ProcessRunner.run(BuiltPushctl.url, args + ["--config", configPath])
    }

    /// `openssl args…` on `input`: the last field of its one line of output (the digest).
    private static func openssl(_ args: [String], _ input: String) async throws -> String {
        let r = try await ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/openssl"), args, stdin: input)
        guard r.status == 0, let digest = r.stdout.split(whereSeparator: \.isWhitespace).last else {
            throw ServeFailure("openssl \(args.first ?? ""): \(r.stderr)")
        }
        return String(digest)
    }
}

/// Why the test server could not be used.
struct ServeFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
