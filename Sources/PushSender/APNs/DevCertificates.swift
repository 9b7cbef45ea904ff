import Foundation

/// A development PKI for the simulator, the tests and `make run` (`pushctl cert make-dev`): a CA, a server
/// certificate for `localhost`/`127.0.0.1`/`::1` (by default), an APNs-style client push certificate (PEM and .p12, modern
/// and legacy), and a token-mode .p8 key. All keys are EC P-256.
///
/// Files written into the directory (keys, .p12 files and the password are mode 0600):
///
/// | file | content |
/// |---|---|
/// | `ca.pem`, `ca.key` | the CA (trust anchor for both sides) |
/// | `server.pem`, `server.key` | the simulator's certificate: SAN DNS:localhost, IP:127.0.0.1, IP:::1; serverAuth |
/// | `client.pem`, `client.key` | the push certificate: UID = topic, Apple environment OID(s), clientAuth |
/// | `client.p12` | client cert + key, AES-256-CBC + PBKDF2, HMAC-SHA-256 MAC |
/// | `client.p12.password` | the random password of both .p12 files (one line, newline-terminated) |
/// | `client-legacy.p12` | the same, RC2-40 (cert) / 3DES (key) with a SHA-1 MAC, as macOS Keychain exports |
/// | `AuthKey_DEVKEY1234.p8` | token-mode signing key (PKCS#8 PEM), key id ``keyId``, team id ``teamId`` |
/// | `AuthKey_DEVKEY1234.pub.pem` | its public key, for verifying tokens (the simulator) |
public struct DevCertificates: Sendable {
    /// The key id of the generated .p8 key.
    public static let keyId = "DEVKEY1234"
    /// The team id to use with the generated .p8 key.
    public static let teamId = "DEVTEAM123"
    /// Every file ``make(in:options:)`` writes.
    public static let fileNames = [
        "ca.pem", "ca.key", "server.pem", "server.key", "client.pem", "client.key", "client.p12",
        "client.p12.password", "client-legacy.p12", "AuthKey_\(keyId).p8", "AuthKey_\(keyId).pub.pem",
    ]

    /// What to generate.
    public struct Options: Sendable {
        /// The app's bundle id: the client certificate's UID.
        public var topic: String
        /// Validity of every certificate in days, from `now` (minus one hour for clock skew). Default 365.
        public var days: Int
        /// The client certificate's APNs environment. Default `.development`. `.universal` also adds Apple's
        /// topics extension with `topic` (app), `topic.voip` and `topic.complication`.
        public var environment: CertificateEnvironment
        /// Overwrite existing files. Default false: existing files are an error and nothing is written.
        public var force: Bool
        /// The issuing time (a past date makes expired certificates for tests). Default: the current time.
        public var now: Date
        /// DNS names and IP addresses in the server certificate. Default `localhost`, `127.0.0.1`, `::1`
        /// (tests of hostname verification can pass other names).
        public var serverNames: [String]

        /// Creates options with the documented defaults.
        public init(topic: String, days: Int = 365, environment: CertificateEnvironment = .development,
                    force: Bool = false, now: Date = Date(),
                    serverNames: [String] = ["localhost", "127.0.0.1", "::1"]) {
            self.topic = topic
            self.days = days
            self.environment = environment
            self.force = force
            self.now = now
            self.serverNames = serverNames
        }
    }

    /// The directory holding the files.
    public let directory: String

    /// The absolute path of one of ``fileNames`` in ``directory``.
    public func path(_ name: String) -> String { (directory as NSString).appendingPathComponent(name) }

    /// Generates everything in memory, then writes it to `directory` (created if missing). Refuses, writing
    /// nothing, when any target file exists and `options.force` is false.
    @discardableResult
    public static func make(in directory: String, options: Options) throws(CredentialError) -> DevCertificates {
        let topic = options.topic
        guard !topic.isEmpty, !topic.contains(where: { $0.isWhitespace || $0 == "/" }) else {
            throw CredentialError(.invalidInput, "topic must be a bundle id like com.example.app, not '\(topic)'")
        }
        guard !options.serverNames.isEmpty,
              options.serverNames.allSatisfy({ !$0.isEmpty && !$0.contains(where: { $0 == "," || $0.isWhitespace }) })
        else {
            throw CredentialError(.invalidInput, "server names must be host names or IP addresses")
        }
        guard (1...36_500).contains(options.days) else {
            throw CredentialError(.invalidInput, "days must be between 1 and 36500, not \(options.days)")
        }
        let result = DevCertificates(directory: directory)
        let existing = fileNames.filter { FileManager.default.fileExists(atPath: result.path($0)) }
        if !existing.isEmpty && !options.force {
            throw CredentialError(.io, "\(directory) already holds \(existing.joined(separator: ", ")); use --force to overwrite")
        }
        let files = try generate(options)
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw CredentialError(.io, "cannot create directory \(directory): \(error.localizedDescription)")
        }
        // Write to temporary names first, then rename, so a failure leaves no half-made set behind.
        var written: [String] = []
        do throws(CredentialError) {
            for (name, bytes, mode) in files {
                let temporary = result.path(".\(name).tmp-\(getpid())")
                written.append(temporary)
                try CredentialFiles.write(bytes, to: temporary, mode: mode)
            }
            for (name, _, _) in files where rename(result.path(".\(name).tmp-\(getpid())"), result.path(name)) != 0 {
                throw CredentialError(.io, "cannot rename into \(result.path(name)): \(String(cString: strerror(errno)))")
            }
        } catch {
            for temporary in written { unlink(temporary) }
            throw error
        }
        return result
    }

    /// All file contents with their modes, generated in memory.
    private static func generate(_ options: Options) throws(CredentialError) -> [(String, [UInt8], mode_t)] {
        let start = Int64(options.now.timeIntervalSince1970.rounded(.down)) - 3600
        let end = Int64(options.now.timeIntervalSince1970.rounded(.down)) + Int64(options.days) * 86_400
        func serial() -> UInt64 { UInt64.random(in: 1...(UInt64.max >> 1)) }

        let caKey = try OpenSSLKey.generateP256()
        let ca = try OpenSSLCertificate.issue(
            .init(subject: [("O", "PushProvider Development"), ("CN", "PushProvider Development CA")],
                  serial: serial(), notBefore: start, notAfter: end,
                  extensions: [("basicConstraints", "critical,CA:TRUE"), ("keyUsage", "critical,keyCertSign,cRLSign"),
                               ("subjectKeyIdentifier", "hash")]),
            key: caKey, issuer: nil, issuerKey: caKey)

        let serverKey = try OpenSSLKey.generateP256()
        let server = try OpenSSLCertificate.issue(
            .init(subject: [("O", "PushProvider Development"), ("CN", options.serverNames[0])],
                  serial: serial(), notBefore: start, notAfter: end,
                  extensions: leafExtensions + [("extendedKeyUsage", "serverAuth"),
                                                ("subjectAltName", subjectAltName(options.serverNames))]),
            key: serverKey, issuer: ca, issuerKey: caKey)

        let clientKey = try OpenSSLKey.generateP256()
        let client = try OpenSSLCertificate.issue(
            clientSpec(options, serial: serial(), notBefore: start, notAfter: end),
            key: clientKey, issuer: ca, issuerKey: caKey)

        let password = (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        let friendlyName = client.subjectUserIDs().first ?? options.topic
        let modern = try OpenSSLPKCS12.create(
            password: password, friendlyName: friendlyName, key: clientKey, certificate: client, encryption: .modern)
        let legacy = try OpenSSLPKCS12.create(
            password: password, friendlyName: friendlyName, key: clientKey, certificate: client, encryption: .legacy)
        let authKey = try OpenSSLKey.generateP256()

        let secret: mode_t = 0o600, published: mode_t = 0o644
        return [
            ("ca.pem", try ca.pem(), published), ("ca.key", try caKey.privateKeyPEM(), secret),
            ("server.pem", try server.pem(), published), ("server.key", try serverKey.privateKeyPEM(), secret),
            ("client.pem", try client.pem(), published), ("client.key", try clientKey.privateKeyPEM(), secret),
            ("client.p12", try modern.der(), secret), ("client.p12.password", Array((password + "\n").utf8), secret),
            ("client-legacy.p12", try legacy.der(), secret),
            ("AuthKey_\(keyId).p8", try authKey.privateKeyPEM(), secret),
            ("AuthKey_\(keyId).pub.pem", try authKey.publicKeyPEM(), published),
        ]
    }

    /// `DNS:name` or `IP:address` entries; an address is anything with a colon or only digits and dots.
    private static func subjectAltName(_ names: [String]) -> String {
        names.map { name in
            name.contains(":") || name.allSatisfy({ $0.isNumber || $0 == "." }) ? "IP:\(name)" : "DNS:\(name)"
        }.joined(separator: ",")
    }

    private static let leafExtensions: [(name: String, value: String)] = [
        ("basicConstraints", "critical,CA:FALSE"), ("keyUsage", "critical,digitalSignature"),
        ("subjectKeyIdentifier", "hash"), ("authorityKeyIdentifier", "keyid:always"),
    ]

    /// The push certificate, shaped like Apple's: subject UID = topic, CN naming the service, OU = team id,
    /// environment OID(s) with an ASN.1 NULL value, and for universal certificates the topics extension.
    private static func clientSpec(_ options: Options, serial: UInt64, notBefore: Int64, notAfter: Int64)
        -> OpenSSLCertificate.Spec
    {
        let topic = options.topic
        let null = DER.null
        let (service, raw): (String, [(oid: String, der: [UInt8], critical: Bool)]) =
            switch options.environment {
            case .development:
                ("Apple Development IOS Push Services", [(CertificateFacts.developmentOID, null, false)])
            case .production:
                ("Apple Production IOS Push Services", [(CertificateFacts.productionOID, null, false)])
            case .universal:
                ("Apple Push Services", [
                    (CertificateFacts.developmentOID, null, false), (CertificateFacts.productionOID, null, false),
                    (CertificateFacts.topicsOID, topicsExtension([
                        (topic, ["app"]), ("\(topic).voip", ["voip"]), ("\(topic).complication", ["complication"]),
                    ]), false),
                ])
            }
        return OpenSSLCertificate.Spec(
            subject: [("UID", topic), ("CN", "\(service): \(topic)"), ("OU", teamId),
                      ("O", "PushProvider Development"), ("C", "US")],
            serial: serial, notBefore: notBefore, notAfter: notAfter,
            extensions: leafExtensions + [("extendedKeyUsage", "clientAuth")],
            rawExtensions: raw)
    }

    /// Apple's topics extension value: SEQUENCE { UTF8String topic, SEQUENCE { UTF8String type, … }, … }.
    static func topicsExtension(_ entries: [(topic: String, types: [String])]) -> [UInt8] {
        let body = entries.flatMap { entry in
            DER.utf8(entry.topic) + DER.encode(tag: DER.sequence, entry.types.flatMap(DER.utf8))
        }
        return DER.encode(tag: DER.sequence, body)
    }
}
