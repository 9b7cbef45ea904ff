import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import PushProviderClient
import Testing
import TestSupport

/// A real `pushctl serve` for the client's tests: the built binary, on a loopback port it binds itself (port 0,
/// read back from its banner: no port is picked first and bound later, which another process could take in
/// between; one listener: the admin address is the public one), app `example` on a development .p8 key (never
/// contacted: nothing is sent), a registration key and a send key, and a user secret for `userAuth` — on SQLite
/// or on a fresh database of the test PostgreSQL server. ``stop()`` and ``start()`` take it down and bring it back
/// on the same port and data (an outage, as the app sees it): while it is down, the port stays held by a socket
/// that is bound but not listening (``PortHold``: a connection is refused, as by a stopped server, and the kernel
/// hands the port to no other socket), and the server binds it again beside that socket; ``finish()`` stops it and
/// removes its directory.
final class ServedPushctl: @unchecked Sendable {
    /// The registry backend.
    enum Backend: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case sqlite, postgres
        var testDescription: String { rawValue }
    }

    let dir: URL
    let registrationKey: String
    let sendKey: String
    let userSecret: String
    private let lock = NSLock()
    /// One URLSession for the tests' own requests (look-ups with the send key).
    private static let http = URLSessionTransport()
    private var process: ChildProcess?
    private var boundPort = 0
    private var hold: PortHold?

    /// The port the server got at its first start (and binds again at every restart).
    var port: Int { lock.withLock { boundPort } }
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

    private init(dir: URL, registrationKey: String, sendKey: String, userSecret: String) {
        self.dir = dir
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
            dir: dir, registrationKey: "reg-" + UUID().uuidString,
            sendKey: "send-" + UUID().uuidString, userSecret: UUID().uuidString)
        do {
            let made = try await ProcessRunner.run(
                BuiltPushctl.url, ["cert", "make-dev", "--out", dir.appendingPathComponent("certs").path, "--topic", "com.example.app"])
            guard made.status == 0 else { throw ServeFailure("pushctl cert make-dev: \(made.stderr)") }
            let secretPath = dir.appendingPathComponent("user.secret").path
            try (server.userSecret + "\n").write(toFile: secretPath, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: secretPath)
            let database = backend == .sqlite ? "registry.sqlite" : try await PostgresTestServer.shared().makeDatabase("client")
            try """
                {"database": "\(database)",
                 "server": {"host": "127.0.0.1", "port": 0, "admin": {"host": "127.0.0.1", "port": 0}},
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

    /// Starts (again) `pushctl serve` on the configuration and waits for its banner, which it prints once its
    /// listener is bound: the first time on port 0, reading back the port it got; then on that port, which
    /// ``stop()`` left held (the server binds it beside the holding socket; the hold is let go once it listens).
    func start() async throws {
        let (again, held) = lock.withLock { (boundPort, hold) }
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "PUSHCTL_CONFIG")
        let log = dir.appendingPathComponent("serve.log")
        // Appended to: what an earlier start printed stays, and this start's banner is read from here on.
        let offset = ((try? FileManager.default.attributesOfItem(atPath: log.path))?[.size] as? NSNumber)?.intValue ?? 0
        let process = try ChildProcess(
            BuiltPushctl.path,
            ["serve", "--config", configPath] + (again == 0 ? [] : ["--port", "\(again)", "--admin-port", "\(again)"]),
            stdoutPath: log.path, stderrPath: log.path, environment: environment)
        lock.withLock { self.process = process }
        let banner = "PushProvider is listening on http://127.0.0.1:"
        var printed = ""
        func printedPort() -> Int? {
            guard let at = printed.range(of: banner), let port = Int(printed[at.upperBound...].prefix { $0.isNumber }), port != 0 else { return nil }
            return port
        }
        do {
            try await waitUntil(deadline: .seconds(60), "pushctl serve prints its banner, or exits") {
                printed = (try? Data(contentsOf: log)).map { String(decoding: $0.dropFirst(Int(offset)), as: UTF8.self) } ?? ""
                return printedPort() != nil || !process.isRunning
            }
        } catch is WaitTimedOut {
            throw ServeFailure("pushctl serve printed no banner within 60 s: \(self.log)")
        }
        guard let port = printedPort() else { throw ServeFailure("pushctl serve exited: \(printed)") }
        guard again == 0 || port == again else { throw ServeFailure("pushctl serve came back on port \(port), not \(again)") }
        lock.withLock {
            boundPort = port
            hold = nil
        }
        held?.release()
    }

    /// Stops the server (SIGTERM) and holds its port from the moment its listener closes (the server may still be
    /// finishing its requests) until the next ``start()``: waited for on a GCD thread, not the test's.
    func stop() async throws {
        try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, any Error>) in
            DispatchQueue.global().async { done.resume(with: Result { try self.stopBlocking(holdingThePort: true) }) }
        }
    }

    private func stopBlocking(holdingThePort: Bool) throws {
        let (running, port) = lock.withLock { () -> (ChildProcess?, Int) in
            defer { process = nil }
            return (process, boundPort)
        }
        guard let running, running.isRunning else { return }
        running.terminate()
        var held: PortHold? = nil
        while holdingThePort, port != 0, held == nil {
            let exited = !running.isRunning
            held = PortHold(port: port)
            if held == nil && exited { break }
            if held == nil { usleep(1_000) }
        }
        running.stop()
        lock.withLock { hold = held }
        // Once the process has gone, the port is free: a hold that still fails means another socket has it.
        if holdingThePort && port != 0 && held == nil { throw ServeFailure("could not hold port \(port) after pushctl serve stopped") }
    }

    /// Stops it, lets go of its port and removes its directory.
    func finish() {
        try? stopBlocking(holdingThePort: false)
        lock.withLock { () -> PortHold? in defer { hold = nil }; return hold }?.release()
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

/// A loopback TCP port held by a socket bound to it with `SO_REUSEADDR` but not listening: a connection to it is
/// refused, as by a stopped server; the kernel gives the port to no other socket (a `bind` to port 0 or a
/// `connect` skips it); and a server binding it by number with `SO_REUSEADDR` (as Hummingbird's listeners do)
/// gets it beside the hold.
final class PortHold: @unchecked Sendable {
    private let fd: Int32

    /// Holds `port`, or nil when something else has it (the stopping server's listener, still open).
    init?(port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = in_port_t(UInt16(port).bigEndian)
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard bound else {
            close(fd)
            return nil
        }
        self.fd = fd
    }

    /// Lets go of the port.
    func release() { close(fd) }
}

/// Why the test server could not be used.
struct ServeFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
