import PushCore
import Foundation
import PushSender
import Testing
import TestSupport

/// Helpers for the credential tests: temp dirs with a freshly generated dev PKI, a settable clock, and a
/// bounded subprocess runner for `pushctl` and the `openssl` CLI.
enum CredentialFixture {
    static let topic = "com.example.app"

    /// A new empty temp directory, removed when the test process exits.
    static func temporaryDirectory(_ label: String = #function) throws -> String {
        try TemporaryDirectories.make("creds-" + label)
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
    /// The built pushctl (``BuiltPushctl``), nil when it is not built.
    static var pushctlPath: String? { BuiltPushctl.isBuilt ? BuiltPushctl.path : nil }
}

/// The outcome of a subprocess.
typealias ProcessResult = ProcessOutcome

/// Runs `executable` with `arguments` (``ProcessRunner``), killed after `timeout` seconds (a hung child fails the test).
func runProcess(
    _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
    currentDirectory: String? = nil, timeout: TimeInterval = 30
) throws -> ProcessResult {
    try ProcessRunner.runBlocking(
        URL(fileURLWithPath: executable), arguments, environment: environment,
        cwd: currentDirectory.map { URL(fileURLWithPath: $0) }, timeout: timeout)
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
