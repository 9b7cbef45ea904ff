import ArgumentParser
import Foundation
import PushCore
import PushSecrets
import PushSender

/// `pushctl cert`: development certificates and certificate inspection.
struct CertCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cert",
        abstract: "Make development certificates; inspect push certificates (.p12, PEM, DER).",
        subcommands: [MakeDev.self, Inspect.self])
}

extension CertCommand {
    /// `pushctl cert make-dev --out DIR --topic T [--days N] [--environment E] [--force]`.
    struct MakeDev: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "make-dev",
            abstract: "Create a development PKI: CA, simulator server certificate, client push certificate (.p12), .p8 key.",
            discussion: """
                Writes ca.pem ca.key server.pem server.key client.pem client.key client.p12 client.p12.password \
                client-legacy.p12 AuthKey_\(DevCertificates.keyId).p8 AuthKey_\(DevCertificates.keyId).pub.pem \
                into DIR. The .p8 key's key id is \(DevCertificates.keyId), its team id \(DevCertificates.teamId).
                """)

        @OptionGroup var logging: LogOptions
        @Option(name: .long, help: "Directory to write into (created if missing).")
        var out: String

        @Option(name: .long, help: "The app's bundle id (the client certificate's UID).")
        var topic: String

        @Option(name: .long, help: "Validity in days.")
        var days: Int = 365

        @Option(name: .long, help: "Client certificate environment: development, production or universal.")
        var environment: String = "development"

        @Option(name: .customLong("server-name"), help: "A DNS name or IP address of the simulator's certificate (repeatable; default localhost, 127.0.0.1, ::1).")
        var serverNames: [String] = []

        @Flag(name: .long, help: "Overwrite existing files.")
        var force = false

        func run() throws {
            guard let environment = CertificateEnvironment(rawValue: environment) else {
                throw CLIError.usage("--environment must be development, production or universal, not '\(environment)'")
            }
            let directory = absolutePath(out)
            do {
                let made = try DevCertificates.make(
                    in: directory,
                    options: .init(
                        topic: topic, days: days, environment: environment, force: force,
                        serverNames: serverNames.isEmpty ? ["localhost", "127.0.0.1", "::1"] : serverNames))
                for name in DevCertificates.fileNames { print(made.path(name)) }
            } catch {
                throw CLIError.usage(error.message)
            }
        }
    }

    /// `pushctl cert inspect FILE [--password-file F | --password-env V] [--warn-days N] [--json]`.
    struct Inspect: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "inspect",
            abstract: "Show a push certificate's subject, topics, environment and validity.",
            discussion: """
                FILE is a .p12/.pfx (password from --password-file or --password-env, never the command line) or \
                a PEM/DER certificate. Exit status: 0 valid, 1 expired or expiring within --warn-days (usable \
                from cron as an expiry alarm), 2 unreadable input or wrong password.
                """)

        @Argument(help: "A .p12/.pfx file, or a PEM or DER certificate.")
        var file: String

        @OptionGroup var logging: LogOptions
        @Option(name: .long, help: "File holding the .p12 password: its first line (a secret file, mode 0600 or 0640).")
        var passwordFile: String?

        @Option(name: .long, help: "Environment variable holding the .p12 password.")
        var passwordEnv: String?

        @Option(name: .long, help: "Exit 1 when the certificate expires within this many days.")
        var warnDays: Int = 30

        @Flag(name: .long, help: "Print one JSON object.")
        var json = false

        func run() throws {
            guard warnDays >= 0 else { throw CLIError.usage("--warn-days must not be negative") }
            let path = absolutePath(file)
            let facts = try loadFacts(path)
            let now = Date()
            let report = InspectReport(file: path, facts: facts, now: now, warnDays: warnDays)
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys]
                print(String(decoding: try encoder.encode(report), as: UTF8.self))
            } else {
                print(report.text)
            }
            switch report.status {
            case "expired":
                throw CLIError(code: 1, message: "certificate expired on \(facts.notAfterISO)")
            case "expiring":
                throw CLIError(
                    code: 1,
                    message: "certificate expires on \(facts.notAfterISO) (\(report.daysLeft) days left, --warn-days \(warnDays))")
            default:
                break
            }
        }

        /// A .p12 (and its password file) is a secret file, read through ``SecretFileLoader`` like the
        /// configuration's; a PEM or DER certificate is public and read as it is.
        private func loadFacts(_ path: String) throws -> CertificateFacts {
            let isP12 = ["p12", "pfx"].contains((path as NSString).pathExtension.lowercased())
                || passwordFile != nil || passwordEnv != nil
            let data: [UInt8]
            if isP12 {
                do { data = try SecretFileLoader.read(path, name: ".p12 file") } catch { throw CLIError.usage(error.message) }
            } else {
                guard FileManager.default.fileExists(atPath: path) else { throw CLIError.usage("\(path): no such file") }
                guard let bytes = FileManager.default.contents(atPath: path) else { throw CLIError.usage("\(path): cannot read") }
                data = [UInt8](bytes)
            }
            do {
                guard isP12 else { return try CertificateFacts(certificate: data) }
                let source: PasswordSource? =
                    switch (passwordFile, passwordEnv) {
                    case (let file?, nil): .file(absolutePath(file))
                    case (nil, let name?): .environment(name)
                    case (nil, nil): nil
                    default: throw CLIError.usage("give --password-file or --password-env, not both")
                    }
                // No password option: try the empty password (some exports have none).
                let password = try source.map {
                    try CredentialsLoader.password(from: $0, environment: ProcessInfo.processInfo.environment)
                } ?? ""
                return try CertificateCredentials.load(p12: data, password: password).facts
            } catch let error as CredentialError {
                let hint = error.code == .wrongPassword && passwordFile == nil && passwordEnv == nil
                    ? " (give --password-file or --password-env)" : ""
                throw CLIError.usage("\(path): \(error.message)\(hint)")
            }
        }
    }
}

/// What `cert inspect` prints.
struct InspectReport: Encodable {
    let file: String
    let subject: String
    let topics: [String]
    let environment: String
    let notBefore: String
    let notAfter: String
    let daysLeft: Int
    let warnDays: Int
    /// `ok`, `expiring` (within --warn-days) or `expired`.
    let status: String

    init(file: String, facts: CertificateFacts, now: Date, warnDays: Int) {
        self.file = file
        subject = facts.subject
        topics = facts.topics
        environment = facts.environment?.rawValue ?? "none"
        notBefore = facts.notBeforeISO
        notAfter = facts.notAfterISO
        daysLeft = facts.daysLeft(now: now)
        self.warnDays = warnDays
        if facts.isExpired(now: now) {
            status = "expired"
        } else if Double(facts.notAfter) - now.timeIntervalSince1970 <= Double(warnDays) * 86_400 {
            status = "expiring"
        } else {
            status = "ok"
        }
    }

    var text: String {
        """
        file:        \(file)
        subject:     \(subject)
        topics:      \(topics.isEmpty ? "(none)" : topics.joined(separator: ", "))
        environment: \(environment == "none" ? "none (no Apple push OID: not an APNs certificate)" : environment)
        not before:  \(notBefore)
        not after:   \(notAfter)
        days left:   \(daysLeft)
        status:      \(status)
        """
    }
}
