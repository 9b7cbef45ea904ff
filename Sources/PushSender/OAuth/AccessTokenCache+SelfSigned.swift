import Foundation

extension AccessTokenCache {
    /// A cache whose "grants" are bearer tokens this process signs itself and sends as they are, with no token
    /// exchange (HarmonyOS Push Kit's service-account JWT): `sign(issuedAt)` makes one valid for `lifetime` seconds.
    /// Everything else is the cache's, unchanged: one token shared by every connection, renewed (re-signed) a
    /// twelfth of its lifetime before it expires (5 minutes of an hour), a refused one (``rejected(_:)``) re-signed
    /// once, and a signing failure (a key that cannot sign) reported like a refused grant, a ``CredentialError``
    /// that stops the service for the app.
    public convenience init(
        selfSignedLifetime lifetime: TimeInterval, now: @escaping @Sendable () -> Date = { Date() },
        sign: @escaping @Sendable (Date) throws(CredentialError) -> String
    ) {
        self.init(now: now) {
            // The lifetime the cache judges by is the token's own, from its `iat` (this clock's now).
            Grant(accessToken: try sign(now()), expiresIn: lifetime)
        }
    }
}
