import Foundation
import PushCore

/// An HMS Core app's OAuth 2.0 client credentials (Huawei, "Client Credentials": `grant_type=client_credentials`,
/// `client_id`, `client_secret`, form-encoded, to Huawei's token endpoint; an access token of an hour comes back).
/// The secret is read once from its secret file (``CredentialFiles``: mode rules, one loader), kept in memory only,
/// and never printed: ``description`` names the client ID and where the grants go.
public struct HMSClientCredentials: Sendable, CustomStringConvertible {
    /// The client ID (AppGallery Connect): names the send URL and goes into every grant.
    public let clientId: String
    /// Where grants go (Huawei's OAuth host, the simulator's, a URL's `/oauth2/v3/token`).
    public let tokenURL: String
    private let secret: String

    /// Credentials with `secret` as given (tests, and the file loader below).
    public init(clientId: String, secret: String, tokenURL: String) {
        self.clientId = clientId
        self.secret = secret
        self.tokenURL = tokenURL
    }

    /// Credentials whose secret is the first line of `secretFile` (refused like every secret file: a group- or
    /// world-readable file, a missing one, an empty one, each named by `configurationKey`).
    public init(clientId: String, secretFile: String, tokenURL: String, configurationKey: String) throws(CredentialError) {
        let secret = try CredentialFiles.firstLine(secretFile, name: configurationKey)
        guard !secret.isEmpty else { throw CredentialError(.invalidInput, "\(configurationKey) (\(secretFile)) is empty: it must hold the app's client secret") }
        self.init(clientId: clientId, secret: secret, tokenURL: tokenURL)
    }

    /// The token request's form body.
    public var grantRequestBody: String {
        "grant_type=client_credentials&client_id=" + FormEncoding.escaped(clientId) + "&client_secret=" + FormEncoding.escaped(secret)
    }

    public var description: String { "HMS client \(clientId) (grants at \(tokenURL))" }
}

extension AccessTokenCache {
    /// A cache whose grants are Huawei client-credentials grants posted to `credentials.tokenURL`
    /// (``AccessTokenCache/postGrant(url:body:caFile:proxy:timeoutMs:)``), judging the tokens' age by `now`.
    public convenience init(
        clientCredentials credentials: HMSClientCredentials, caFile: String? = nil, proxy: SenderProxy? = nil,
        timeoutMs: Int = 10_000, now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.init(now: now) {
            try await Self.postGrant(
                url: credentials.tokenURL, body: Array(credentials.grantRequestBody.utf8), caFile: caFile, proxy: proxy,
                timeoutMs: timeoutMs)
        }
    }
}
