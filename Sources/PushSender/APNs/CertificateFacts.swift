import Foundation

/// Which APNs environments a push certificate may connect to, from Apple's certificate extensions.
public enum CertificateEnvironment: String, Sendable, Codable, CaseIterable {
    /// Sandbox only (OID 1.2.840.113635.100.6.3.1).
    case development
    /// Production only (OID 1.2.840.113635.100.6.3.2).
    case production
    /// Both: the certificate has both OIDs, or Apple's topics extension (1.2.840.113635.100.6.3.6).
    case universal
}

/// What a push certificate says about itself. Shared by the sender (refuse expired certificates), health
/// reporting and `pushctl cert inspect`.
public struct CertificateFacts: Sendable, Equatable, Codable {
    /// Apple's "APNs development" extension OID.
    public static let developmentOID = "1.2.840.113635.100.6.3.1"
    /// Apple's "APNs production" extension OID.
    public static let productionOID = "1.2.840.113635.100.6.3.2"
    /// Apple's topics extension OID (universal certificates): a SEQUENCE alternating a UTF8String topic and a
    /// SEQUENCE of its push types (`app`, `voip`, `complication`, …).
    public static let topicsOID = "1.2.840.113635.100.6.3.6"

    /// The subject on one line, e.g. `UID = com.example.app, CN = Apple Push Services: com.example.app, …`.
    public var subject: String
    /// Topics this certificate may push to: the subject UID(s), then the topics extension's entries, without
    /// duplicates.
    public var topics: [String]
    /// The environment from Apple's OIDs; nil when the certificate carries none (not an APNs certificate).
    public var environment: CertificateEnvironment?
    /// Start of validity, seconds since 1970 (UTC).
    public var notBefore: Int64
    /// End of validity, seconds since 1970 (UTC).
    public var notAfter: Int64

    /// Creates facts from their parts.
    public init(subject: String, topics: [String], environment: CertificateEnvironment?, notBefore: Int64, notAfter: Int64) {
        self.subject = subject
        self.topics = topics
        self.environment = environment
        self.notBefore = notBefore
        self.notAfter = notAfter
    }

    /// Reads the facts of a certificate in PEM (the first certificate in the file) or DER form.
    public init(certificate data: [UInt8]) throws(CredentialError) {
        try self.init(OpenSSLCertificate(parsing: data))
    }

    init(_ certificate: OpenSSLCertificate) throws(CredentialError) {
        let validity = try certificate.validity()
        var topics = certificate.subjectUserIDs()
        let topicsExtension = certificate.extensionValue(oid: Self.topicsOID)
        for topic in topicsExtension.map(Self.topics(inExtension:)) ?? [] where !topics.contains(topic) {
            topics.append(topic)
        }
        let development = certificate.extensionValue(oid: Self.developmentOID) != nil
        let production = certificate.extensionValue(oid: Self.productionOID) != nil
        let environment: CertificateEnvironment? =
            switch (development, production, topicsExtension != nil) {
            case (true, true, _), (_, _, true): .universal
            case (true, false, false): .development
            case (false, true, false): .production
            case (false, false, false): nil
            }
        self.init(
            subject: try certificate.subjectOneLine(), topics: topics, environment: environment,
            notBefore: validity.notBefore, notAfter: validity.notAfter)
    }

    /// Topic strings from the DER value of the topics extension. Lenient: strings at the top level of the outer
    /// SEQUENCE are topics, nested SEQUENCEs (push types) are skipped, malformed bytes end the walk.
    public static func topics(inExtension value: [UInt8]) -> [String] {
        var items = DER.elements(in: value[...])
        if items.count == 1, items[0].tag == DER.sequence { items = DER.elements(in: items[0].content) }
        return items.compactMap(\.text).filter { !$0.isEmpty }
    }

    /// Whole days until `notAfter` (rounded down; negative once expired).
    public func daysLeft(now: Date) -> Int {
        Int(((Double(notAfter) - now.timeIntervalSince1970) / 86_400).rounded(.down))
    }

    /// Whether `notAfter` has passed at `now`.
    public func isExpired(now: Date) -> Bool { now.timeIntervalSince1970 >= Double(notAfter) }

    /// `notBefore` as ISO 8601 UTC, e.g. `2025-01-31T12:00:00Z`.
    public var notBeforeISO: String { Self.iso8601(notBefore) }
    /// `notAfter` as ISO 8601 UTC.
    public var notAfterISO: String { Self.iso8601(notAfter) }

    /// An error when the certificate cannot be used at `now` (expired or not yet valid), naming the date.
    public func validityError(now: Date) -> CredentialError? {
        if isExpired(now: now) {
            return CredentialError(.expired, "client certificate expired on \(notAfterISO) (\(subject))")
        }
        if now.timeIntervalSince1970 < Double(notBefore) {
            return CredentialError(.notYetValid, "client certificate is not valid before \(notBeforeISO) (\(subject))")
        }
        return nil
    }

    /// Seconds since 1970 as ISO 8601 UTC with a `Z` suffix.
    public static func iso8601(_ seconds: Int64) -> String {
        Date(timeIntervalSince1970: TimeInterval(seconds)).ISO8601Format()
    }
}
