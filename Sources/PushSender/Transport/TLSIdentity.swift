/// A TLS client identity held in memory: a certificate (chain) and its private key.
///
/// The unencrypted key never touches disk. It is decoded once into OpenSSL objects that every connection of
/// the transport presents (libcurl's `CURLOPT_SSL_CTX_FUNCTION`), so no per-handle PEM copy of the key exists;
/// with a libcurl that cannot hand over its OpenSSL context the PEM bytes are given to it instead.
public struct TLSIdentity: Sendable {
    /// The decoded certificate, chain and key; nil when OpenSSL could not read the PEM given to
    /// ``init(certificatePEM:privateKeyPEM:)`` (libcurl then gets that PEM and reports the problem at connect).
    let decoded: OpenSSLIdentity?
    private let pem: (certificate: [UInt8], key: [UInt8])?

    /// An identity from PEM: the client certificate followed by any intermediates, and the private key.
    public init(certificatePEM: [UInt8], privateKeyPEM: [UInt8]) {
        decoded = try? OpenSSLIdentity(certificatePEM: certificatePEM, privateKeyPEM: privateKeyPEM)
        pem = (certificatePEM, privateKeyPEM)
    }

    /// An identity decoded from a .p12.
    init(_ decoded: OpenSSLIdentity) {
        self.decoded = decoded
        pem = nil
    }

    /// The client certificate followed by any intermediates, PEM (as given, or encoded from the .p12).
    public var certificatePEM: [UInt8] { pem?.certificate ?? (try? decoded?.certificatePEM()) ?? [] }

    /// The private key, PEM (unencrypted, memory only).
    public var privateKeyPEM: [UInt8] { pem?.key ?? (try? decoded?.privateKeyPEM()) ?? [] }
}
