import PushCore

/// A TLS client identity held in memory: PEM certificate (chain) and PEM private key.
///
/// The unencrypted key never touches disk; the transport hands these bytes to libcurl as blobs.
public struct TLSIdentity: Sendable {
    /// The client certificate followed by any intermediates, PEM.
    public var certificatePEM: [UInt8]
    /// The private key, PEM (unencrypted, memory only).
    public var privateKeyPEM: [UInt8]

    /// Creates an identity.
    public init(certificatePEM: [UInt8], privateKeyPEM: [UInt8]) {
        self.certificatePEM = certificatePEM
        self.privateKeyPEM = privateKeyPEM
    }
}

/// What the transport needs from credentials: a TLS identity (certificate mode) and/or an
/// `authorization` header (token mode). Implementations cache and refresh as Apple requires.
public protocol CredentialProvider: Sendable {
    /// The client certificate to present, or nil in token mode.
    var tlsIdentity: TLSIdentity? { get }
    /// The `authorization` header value (`bearer <JWT>`) to send now, or nil in certificate mode.
    func authorizationHeader() throws -> String?
    /// Called when APNs answered 403 ExpiredProviderToken for `header`: the next call to
    /// ``authorizationHeader()`` returns a fresh token (subject to Apple's refresh limits).
    func providerTokenExpired(_ header: String)
}
