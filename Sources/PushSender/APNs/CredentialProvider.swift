import PushCore

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
