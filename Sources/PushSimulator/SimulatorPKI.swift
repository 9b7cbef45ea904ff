import Crypto
import Foundation
import X509

/// An in-memory development PKI for tests: a CA, a server certificate for `localhost`/`127.0.0.1`, and
/// APNs-style client certificates (subject UID topic, environment OIDs, Apple's topics extension).
///
/// `pushctl cert make-dev` writes the files users need; this type exists so tests can make any variety
/// of certificate (production-only, multi-topic, untrusted) without OpenSSL or files.
public struct SimulatorPKI: Sendable {
    /// A certificate and its private key, both PEM.
    public struct Identity: Sendable, Equatable {
        /// The certificate (`-----BEGIN CERTIFICATE-----`).
        public var certificatePEM: String
        /// The P-256 private key as PKCS#8 (`-----BEGIN PRIVATE KEY-----`).
        public var keyPEM: String
    }

    /// Which APNs environment OIDs a client certificate carries.
    public enum ClientEnvironment: Sendable, Equatable {
        /// `1.2.840.113635.100.6.3.1` only.
        case development
        /// `1.2.840.113635.100.6.3.2` only.
        case production
        /// Both OIDs.
        case both
        /// Apple's topics extension `1.2.840.113635.100.6.3.6` (universal: both environments).
        case universal
        /// No environment OID at all (not a push certificate).
        case none
    }

    /// The CA certificate and key.
    public let ca: Identity
    /// A server certificate for `localhost` and `127.0.0.1`, signed by the CA.
    public let server: Identity
    private let caName: DistinguishedName

    /// Makes a new CA and server certificate.
    public init(commonName: String = "PushProvider Simulator Test CA") throws {
        let key = P256.Signing.PrivateKey()
        let name = try DistinguishedName { CommonName(commonName) }
        let extensions = try Certificate.Extensions {
            Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
            Critical(KeyUsage(digitalSignature: true, keyCertSign: true, cRLSign: true))
        }
        let certificate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(key.publicKey),
            notValidBefore: Date().addingTimeInterval(-3600), notValidAfter: Date().addingTimeInterval(86400 * 365),
            issuer: name, subject: name, extensions: extensions, issuerPrivateKey: .init(key))
        self.caName = name
        self.ca = Identity(certificatePEM: try certificate.serializeAsPEM().pemString, keyPEM: key.pemRepresentation)
        let serverKey = P256.Signing.PrivateKey()
        var serverExtensions = try Certificate.Extensions {
            Critical(BasicConstraints.notCertificateAuthority)
            try ExtendedKeyUsage([.serverAuth])
        }
        // SAN: dNSName localhost, iPAddress 127.0.0.1 (encoded by hand to stay on X509's public surface).
        let san: [UInt8] = [0x30, 0x11, 0x82, 0x09] + Array("localhost".utf8) + [0x87, 0x04, 127, 0, 0, 1]
        try serverExtensions.append(Certificate.Extension(oid: [2, 5, 29, 17], critical: false, value: san[...]))
        self.server = try Self.issue(
            subject: DistinguishedName { CommonName("localhost") }, key: serverKey, extensions: serverExtensions,
            issuer: name, issuerKey: key)
    }

    /// Issues an APNs client certificate.
    /// - Parameters:
    ///   - uid: The subject UID (the app's bundle id for a classic certificate); nil omits it.
    ///   - environment: Which environment OIDs to include.
    ///   - topics: Topics for Apple's topics extension (only with `.universal`; defaults to the UID).
    public func client(uid: String?, environment: ClientEnvironment = .development, topics: [String]? = nil) throws -> Identity {
        let key = P256.Signing.PrivateKey()
        var extensions = try Certificate.Extensions {
            Critical(BasicConstraints.notCertificateAuthority)
            try ExtendedKeyUsage([.clientAuth])
        }
        let null: ArraySlice<UInt8> = [0x05, 0x00]
        switch environment {
        case .development:
            try extensions.append(.init(oid: [1, 2, 840, 113635, 100, 6, 3, 1], critical: false, value: null))
        case .production:
            try extensions.append(.init(oid: [1, 2, 840, 113635, 100, 6, 3, 2], critical: false, value: null))
        case .both:
            try extensions.append(.init(oid: [1, 2, 840, 113635, 100, 6, 3, 1], critical: false, value: null))
            try extensions.append(.init(oid: [1, 2, 840, 113635, 100, 6, 3, 2], critical: false, value: null))
        case .universal:
            let list = topics ?? (uid.map { [$0] } ?? [])
            try extensions.append(
                .init(oid: [1, 2, 840, 113635, 100, 6, 3, 6], critical: false, value: Self.topicsExtension(list)[...]))
        case .none:
            break
        }
        var attributes: [RelativeDistinguishedName] = []
        if let uid {
            attributes.append(RelativeDistinguishedName(.init(type: [0, 9, 2342, 19200300, 100, 1, 1], utf8String: uid)))
        }
        attributes.append(RelativeDistinguishedName(.init(type: [2, 5, 4, 3], utf8String: "Apple Push Services: \(uid ?? "test")")))
        return try Self.issue(
            subject: DistinguishedName(attributes), key: key, extensions: extensions, issuer: caName,
            issuerKey: try P256.Signing.PrivateKey(pemRepresentation: ca.keyPEM))
    }

    private static func issue(
        subject: DistinguishedName, key: P256.Signing.PrivateKey, extensions: Certificate.Extensions,
        issuer: DistinguishedName, issuerKey: P256.Signing.PrivateKey
    ) throws -> Identity {
        let certificate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(key.publicKey),
            notValidBefore: Date().addingTimeInterval(-3600), notValidAfter: Date().addingTimeInterval(86400 * 30),
            issuer: issuer, subject: subject, extensions: extensions, issuerPrivateKey: .init(issuerKey))
        return Identity(certificatePEM: try certificate.serializeAsPEM().pemString, keyPEM: key.pemRepresentation)
    }

    /// Apple's topics extension: SEQUENCE { UTF8String topic, SEQUENCE { UTF8String "app" }, … }.
    static func topicsExtension(_ topics: [String]) -> [UInt8] {
        var content: [UInt8] = []
        for topic in topics {
            content += tlv(0x0c, Array(topic.utf8))
            content += tlv(0x30, tlv(0x0c, Array("app".utf8)))
        }
        return tlv(0x30, content)
    }

    static func tlv(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] {
        let n = content.count
        if n < 0x80 { return [tag, UInt8(n)] + content }
        if n < 0x100 { return [tag, 0x81, UInt8(n)] + content }
        return [tag, 0x82, UInt8(n >> 8), UInt8(n & 0xff)] + content
    }
}
