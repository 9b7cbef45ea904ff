import Foundation

/// Certificate-mode credentials: the client certificate and key from a .p12 (as exported from Keychain, modern
/// AES or legacy RC2/3DES), decrypted into memory for the transport. The unencrypted key is never
/// written to disk.
///
/// An expired (or not yet valid) certificate is refused when loading and again at send time:
/// ``authorizationHeader()`` returns nil in this mode but throws ``CredentialError`` with code `.expired` naming
/// the expiry date, so the transport should call it before each connection/request.
public final class CertificateCredentials: CredentialProvider {
    /// Subject, topics, environment and validity of the client certificate.
    public let facts: CertificateFacts
    /// The client certificate (plus chain) and private key, in memory.
    public let tlsIdentity: TLSIdentity?
    private let now: @Sendable () -> Date

    /// Loads a .p12 from memory. Throws `.wrongPassword` ("wrong password or corrupt .p12 (mac verify
    /// failure)"), `.expired` / `.notYetValid` naming the date, `.invalidInput` or `.openssl`.
    /// - Parameter now: the clock used for validity checks, now and at every send.
    public init(p12 data: [UInt8], password: String, now: @escaping @Sendable () -> Date = { Date() })
        throws(CredentialError)
    {
        let loaded = try Self.load(p12: data, password: password)
        if let error = loaded.facts.validityError(now: now()) { throw error }
        self.facts = loaded.facts
        self.tlsIdentity = loaded.identity
        self.now = now
    }

    /// Loads a .p12 file, a secret file like any other (``SecretFileLoader``: refused when other users may read it);
    /// errors name the file.
    public convenience init(p12Path: String, password: String, now: @escaping @Sendable () -> Date = { Date() })
        throws(CredentialError)
    {
        let data = try CredentialFiles.read(p12Path, name: ".p12 file")
        do {
            try self.init(p12: data, password: password, now: now)
        } catch {
            throw CredentialError(error.code, "\(p12Path): \(error.message)")
        }
    }

    /// Decrypts a .p12 without judging its validity dates (for `cert inspect`): identity and facts.
    public static func load(p12 data: [UInt8], password: String) throws(CredentialError)
        -> (identity: TLSIdentity, facts: CertificateFacts)
    {
        let contents = try OpenSSLPKCS12(der: data).parse(password: password)
        let identity = try OpenSSLIdentity(key: contents.key, certificate: contents.certificate, chain: contents.chain)
        return (TLSIdentity(identity), try CertificateFacts(contents.certificate))
    }

    /// Throws `.expired` / `.notYetValid` (naming the date) when the certificate cannot be used now.
    public func checkValidity() throws(CredentialError) {
        if let error = facts.validityError(now: now()) { throw error }
    }

    /// Always nil (certificate mode), but throws when the certificate has expired since loading.
    public func authorizationHeader() throws -> String? {
        try checkValidity()
        return nil
    }

    /// Nothing to refresh in certificate mode.
    public func providerTokenExpired(_ header: String) {}
}
