import Foundation

extension AccessTokenCache {
    /// A cache whose grants are real: each posts `account`'s JWT-bearer assertion to its `token_uri` over libcurl
    /// (``requestGrant(account:issuedAt:caFile:proxy:timeoutMs:)``), judging the assertion's `iat` and the tokens'
    /// age by `now`.
    public convenience init(
        serviceAccount account: FCMServiceAccount, caFile: String? = nil, proxy: SenderProxy? = nil, timeoutMs: Int = 10_000,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.init(now: now) {
            try await Self.requestGrant(account: account, issuedAt: now(), caFile: caFile, proxy: proxy, timeoutMs: timeoutMs)
        }
    }

    /// One grant: `POST token_uri` with the form body (``FCMServiceAccount/grantRequestBody(issuedAt:)``), TLS
    /// verified (`caFile` only adds trust anchors, e.g. the simulator's CA), HTTP/2 or HTTP/1.1, redirects not
    /// followed, on the process's blocking lane (never on Swift's cooperative pool).
    /// - Throws: ``CredentialError`` when the endpoint refuses (naming its `error_description`) or answers without
    ///   a token; ``TransportError`` when there is no answer.
    public static func requestGrant(
        account: FCMServiceAccount, issuedAt: Date, caFile: String? = nil, proxy: SenderProxy? = nil, timeoutMs: Int = 10_000
    ) async throws -> Grant {
        let body = Array(try account.grantRequestBody(issuedAt: issuedAt).utf8)
        return try await postGrant(url: account.tokenURI, body: body, caFile: caFile, proxy: proxy, timeoutMs: timeoutMs)
    }
}
