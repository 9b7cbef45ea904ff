import Foundation
import PushSender
import Testing

/// Helpers for the credential tests: temp dirs with a freshly generated dev PKI, a settable clock, and a
/// bounded subprocess runner for `pushctl` and the `openssl` CLI.
enum CredentialFixture {
    static let topic = "com.example.app"

    /// A new empty temp directory.
    static func temporaryDirectory(_ label: String = #function) throws -> String {
        let safe = label.filter { $0.isLetter || $0.isNumber }
        let path = NSTemporaryDirectory() + "pushprovider-creds-\(safe)-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// A dev PKI made by ``DevCertificates`` in a new temp dir (the committed fixture "script").
    static func make(
        topic: String = topic, days: Int = 365, environment: CertificateEnvironment = .development,
        now: Date = Date(), label: String = #function
    ) throws -> DevCertificates {
        let directory = try temporaryDirectory(label)
        return try DevCertificates.make(
            in: directory, options: .init(topic: topic, days: days, environment: environment, now: now))
    }

    static func bytes(_ path: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// The .p12 password as written by make-dev (without its newline).
    static func password(_ certificates: DevCertificates) throws -> String {
        String(decoding: try bytes(certificates.path("client.p12.password")), as: UTF8.self)
            .trimmingCharacters(in: .newlines)
    }

    static let opensslPath = ["/usr/bin/openssl", "/usr/local/bin/openssl"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }

    /// The built `pushctl` next to the test bundle, else `<package root>/.build/debug/pushctl`.
    static let pushctlPath: String? = {
        var candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("pushctl").path,
            Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("pushctl").path,
        ]
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        candidates.append(root.appendingPathComponent(".build/debug/pushctl").path)
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }()
}

/// The outcome of a subprocess.
struct ProcessResult {
    let status: Int32
    let stdout: String
    let stderr: String
}

/// Runs `executable` with `arguments`, killing it after `timeout` seconds (a hung child fails the test).
func runProcess(
    _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
    currentDirectory: String? = nil, timeout: TimeInterval = 30
) throws -> ProcessResult {
    let scratch = NSTemporaryDirectory() + "pushprovider-proc-\(UUID().uuidString)"
    _ = FileManager.default.createFile(atPath: scratch + ".out", contents: nil)
    _ = FileManager.default.createFile(atPath: scratch + ".err", contents: nil)
    defer {
        try? FileManager.default.removeItem(atPath: scratch + ".out")
        try? FileManager.default.removeItem(atPath: scratch + ".err")
    }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    if let environment { process.environment = environment }
    if let currentDirectory { process.currentDirectoryURL = URL(fileURLWithPath: currentDirectory) }
    let out = try FileHandle(forWritingTo: URL(fileURLWithPath: scratch + ".out"))
    let err = try FileHandle(forWritingTo: URL(fileURLWithPath: scratch + ".err"))
    process.standardOutput = out
    process.standardError = err
    process.standardInput = FileHandle.nullDevice
    try process.run()
    let deadline = Date().addingTimeInterval(timeout)
    while process.isRunning && Date() < deadline { usleep(10_000) }
    if process.isRunning {
        process.terminate()
        process.waitUntilExit()
        Issue.record("\(executable) \(arguments) did not finish within \(timeout) s")
    }
    process.waitUntilExit()
    try out.close()
    try err.close()
    return ProcessResult(
        status: process.terminationStatus,
        stdout: String(decoding: try CredentialFixture.bytes(scratch + ".out"), as: UTF8.self),
        stderr: String(decoding: try CredentialFixture.bytes(scratch + ".err"), as: UTF8.self))
}

/// A clock tests move by hand.
final class ManualClock: @unchecked Sendable {
    private let lock = NSLock()
    private var current: Date

    init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) { current = start }

    var now: Date {
        lock.lock()
        defer { lock.unlock() }
        return current
    }

    func advance(by seconds: TimeInterval) {
        lock.lock()
        current += seconds
        lock.unlock()
    }

    /// The closure credentials take.
    var function: @Sendable () -> Date { { self.now } }
}
