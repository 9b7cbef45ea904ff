import Foundation
import TestSupport

/// A real HTTP proxy for the tests: Debian's `tinyproxy`, started in the foreground on a free loopback port with a
/// private configuration, logging every CONNECT to a file the test reads. `make deps` installs it.
struct Tinyproxy {
    let process: ChildProcess
    /// The proxy's port on 127.0.0.1.
    let port: Int
    let logPath: String

    /// `http://127.0.0.1:port`.
    var url: String { "http://127.0.0.1:\(port)" }

    struct Missing: Error, CustomStringConvertible {
        var description: String {
            "tinyproxy is not installed: run `make deps` (as root it installs it with apt-get), or `apt-get install tinyproxy`"
        }
    }

    /// The installed binary, or an error saying how to install it (never a silent skip).
    static func binary() throws -> String {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let dirs = path.split(separator: ":").map(String.init) + ["/usr/bin", "/usr/sbin", "/usr/local/bin"]
        for dir in dirs where FileManager.default.isExecutableFile(atPath: dir + "/tinyproxy") {
            return dir + "/tinyproxy"
        }
        throw Missing()
    }

    /// Starts tinyproxy in `dir`, allowing CONNECT to `connectPort` only; `basicAuth` makes it demand those
    /// credentials (407 otherwise).
    static func start(in dir: URL, connectPort: Int, basicAuth: (user: String, password: String)? = nil) async throws -> Tinyproxy {
        let binary = try binary()
        let port = try BroadcastCommandTests.freePort()
        let conf = dir.appendingPathComponent("tinyproxy-\(port).conf").path
        let log = dir.appendingPathComponent("tinyproxy-\(port).log").path
        var lines = [
            "Port \(port)", "Listen 127.0.0.1", "Allow 127.0.0.1", "Timeout 60", "MaxClients 20",
            "LogFile \"\(log)\"", "LogLevel Connect", "ConnectPort \(connectPort)",
        ]
        if let basicAuth { lines.append("BasicAuth \(basicAuth.user) \(basicAuth.password)") }
        try (lines.joined(separator: "\n") + "\n").write(toFile: conf, atomically: true, encoding: .utf8)
        let process = try ChildProcess(binary, ["-d", "-c", conf])
        do { try await CLI.waitForPort(port, seconds: 10) } catch {
            process.kill()
            throw error
        }
        return Tinyproxy(process: process, port: port, logPath: log)
    }

    /// Everything tinyproxy logged so far.
    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Logged CONNECT requests to 127.0.0.1:`port` (the simulator).
    func connects(to port: Int) -> [String] {
        log.split(separator: "\n").map(String.init).filter { $0.contains("CONNECT 127.0.0.1:\(port) ") }
    }

    /// SIGTERM, then SIGKILL after 5 s; its log is written line by line, nothing is lost.
    func stop() {
        process.stop(within: 5)
    }
}
