import Crypto
import Foundation
import PushCore
import Synchronization

/// VAPID (RFC 8292): the application server's identity to push services. Each request carries
/// `Authorization: vapid t=<JWT>, k=<public key>`, where the JWT is ES256 (`{"typ":"JWT","alg":"ES256"}`), signed
/// with the app's P-256 key, and claims `aud` (the push service's origin), `exp` and `sub` (a `mailto:` or
/// `https:` contact the service can reach the operator at; Apple answers 403 BadJwtToken without one).
///
/// One token per origin, cached and reused: a new one is signed only when the cached one has less than
/// ``renewalMargin`` left, and each lives ``tokenLifetime`` (12 h; RFC 8292 §2 allows at most 24 h). The clock is
/// passed in; the cache is behind a `Mutex`, so one signer serves every sending task.
public final class VAPIDSigner: Sendable {
    /// How far ahead `exp` is set: 12 hours (at most 24 h by RFC 8292; pywebpush uses 12 h too).
    public static let tokenLifetime: Int64 = 12 * 3600
    /// A cached token is replaced once less than this is left (1 hour), so no request leaves with a token that
    /// could expire in flight or on a push service whose clock runs ahead.
    public static let renewalMargin: Int64 = 3600

    /// The public key, base64url of its uncompressed point: `k`, and what a web app passes to
    /// `pushManager.subscribe({applicationServerKey})`.
    public let publicKey: String
    /// The contact (`sub`).
    public let subject: String
    /// Immutable and used only inside `cache.withLock` (swift-crypto's key types are not marked Sendable on Linux).
    private nonisolated(unsafe) let key: P256.Signing.PrivateKey
    private let now: @Sendable () -> Date
    private let cache = Mutex<Cache>(Cache())

    private struct Cache {
        /// Per origin: the header and its `exp` (s since 1970).
        var tokens: [String: (header: String, expires: Int64)] = [:]
        var signed = 0
    }

    /// A signer for `key`; `subject` must be `mailto:address` or an `https:` URL.
    public init(key: P256.Signing.PrivateKey, subject: String, now: @escaping @Sendable () -> Date = { Date() }) throws(CredentialError) {
        if let problem = Self.subjectProblem(subject) { throw CredentialError(.invalidInput, problem) }
        self.key = key
        self.subject = subject
        self.now = now
        publicKey = Base64URL.encode(key.publicKey.x963Representation)
    }

    /// A signer whose key is the PEM file at `path` (a P-256 private key, SEC1 `EC PRIVATE KEY` or PKCS#8
    /// `PRIVATE KEY`), a secret file like every other (``SecretFileLoader``: refused when other users can access
    /// it); errors name `configKey`.
    public convenience init(
        pemPath path: String, configKey: String = "webpush.vapidKey", subject: String,
        now: @escaping @Sendable () -> Date = { Date() }
    ) throws(CredentialError) {
        let bytes = try CredentialFiles.read(path, name: configKey)
        let key: P256.Signing.PrivateKey
        do {
            key = try P256.Signing.PrivateKey(pemRepresentation: String(decoding: bytes, as: UTF8.self))
        } catch {
            throw CredentialError(.invalidInput, "\(configKey): \(path) is not a P-256 private key in PEM (EC PRIVATE KEY or PRIVATE KEY)")
        }
        do {
            try self.init(key: key, subject: subject, now: now)
        } catch {
            throw CredentialError(error.code, "\(configKey): \(error.message)")
        }
    }

    /// Why `subject` is not a contact push services accept, or nil: the one rule (``WebPushSettings/subjectProblem(_:)``),
    /// which the configuration applies too, so a server never starts with a subject its signer would refuse.
    public static func subjectProblem(_ subject: String) -> String? { WebPushSettings.subjectProblem(subject) }

    /// `vapid t=<JWT>, k=<public key>` for a request to `endpoint`: the cached token for its origin, or a new one.
    public func authorization(for endpoint: WebPushEndpoint) throws(CredentialError) -> String {
        try authorization(origin: endpoint.origin)
    }

    /// ``authorization(for:)`` by origin (`https://host[:port]`).
    public func authorization(origin: String) throws(CredentialError) -> String {
        let time = Int64(now().timeIntervalSince1970.rounded(.down))
        let result: Result<String, CredentialError> = cache.withLock { cache in
            if let cached = cache.tokens[origin], cached.expires - time > Self.renewalMargin,
               cached.expires - time <= Self.tokenLifetime {  // a clock that went back more than the margin re-signs
                return .success(cached.header)
            }
            let expires = time + Self.tokenLifetime
            let token: String
            do throws(CredentialError) {
                token = try makeJWT(audience: origin, expires: expires)
            } catch {
                return .failure(error)
            }
            // Drop expired tokens so origins seen once do not accumulate.
            cache.tokens = cache.tokens.filter { $0.value.expires > time }
            let header = "vapid t=\(token), k=\(publicKey)"
            cache.tokens[origin] = (header, expires)
            cache.signed += 1
            return .success(header)
        }
        return try result.get()
    }

    /// How many tokens this signer has signed (tests and health).
    public var tokensSigned: Int { cache.withLock { $0.signed } }

    /// A signed JWT: base64url(header) . base64url(claims) . base64url(r || s).
    func makeJWT(audience: String, expires: Int64) throws(CredentialError) -> String {
        let header = JSONValue.object([("typ", .string("JWT")), ("alg", .string("ES256"))]).encoded
        let claims = JSONValue.object([("aud", .string(audience)), ("exp", .int(expires)), ("sub", .string(subject))]).encoded
        let signingInput = Base64URL.encode(header) + "." + Base64URL.encode(claims)
        do {
            let signature = try key.signature(for: Data(signingInput.utf8))
            return signingInput + "." + Base64URL.encode(signature.rawRepresentation)
        } catch {
            throw CredentialError(.unknown("signing"), "cannot sign the VAPID token: \(error)")
        }
    }
}
