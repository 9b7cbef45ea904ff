import Crypto
import Foundation
import Synchronization

/// Token-mode credentials: an ES256 JWT signed with a .p8 key, as APNs expects (`{"alg":"ES256","kid":keyId}`,
/// `{"iss":teamId,"iat":now}`).
///
/// Apple's rules, enforced here so no caller can break them:
/// - the token is cached and reused for every request, and refreshed once it is ``refreshAge`` (50 min) old
///   (APNs rejects tokens older than 1 hour);
/// - a key's token is never regenerated sooner than ``minimumRegenerationAge`` (20 min) after the previous
///   one, even when asked (APNs answers 429 TooManyProviderTokenUpdates otherwise);
/// - ``providerTokenExpired(_:)`` (after 403 ExpiredProviderToken) forces a refresh only if that header is the
///   current one and at least 20 minutes old; a younger token is kept (the clock, not the token, is then the
///   problem, and a new token would not help), so a retry with it fails again and is a credential failure.
///
/// Create one instance per key and share it between all senders: the limits are per instance.
/// Thread-safe; the clock is injected.
public final class TokenCredentials: CredentialProvider, Sendable {
    /// Age after which the cached token is replaced: 50 minutes.
    public static let refreshAge: TimeInterval = 50 * 60
    /// Minimum time between two tokens of the same key: 20 minutes.
    public static let minimumRegenerationAge: TimeInterval = 20 * 60

    /// The 10-character key id from the developer account (`kid`).
    public let keyId: String
    /// The team id (`iss`).
    public let teamId: String
    /// Immutable and used only inside `state.withLock` (swift-crypto's key types are not marked Sendable on Linux).
    private nonisolated(unsafe) let key: P256.Signing.PrivateKey
    private let now: @Sendable () -> Date

    /// The cached token and what decides its replacement; signing a new one happens under the same lock, so
    /// concurrent callers get one new token, not one each.
    private struct State {
        var current: (header: String, issuedAt: Date)?
        var refreshRequested = false
        var generated = 0
    }

    private let state = Mutex(State())

    /// Creates credentials from the PEM text of a .p8 (PKCS#8 `BEGIN PRIVATE KEY`, P-256).
    public init(p8PEM: String, keyId: String, teamId: String, now: @escaping @Sendable () -> Date = { Date() })
        throws(CredentialError)
    {
        for (name, value) in [("keyId", keyId), ("teamId", teamId)] {
            guard !value.isEmpty, value.utf8.allSatisfy({ Self.allowedIdentifierBytes.contains($0) }) else {
                throw CredentialError(.invalidInput, "\(name) must be letters and digits, not '\(value)'")
            }
        }
        do {
            key = try P256.Signing.PrivateKey(pemRepresentation: p8PEM)
        } catch {
            throw CredentialError(.invalidInput, "not a P-256 private key in PEM (.p8): \(error)")
        }
        self.keyId = keyId
        self.teamId = teamId
        self.now = now
    }

    /// Loads a .p8 file, a secret file like any other (``SecretFileLoader``: refused when other users may read it);
    /// errors name the file.
    public convenience init(p8Path: String, keyId: String, teamId: String, now: @escaping @Sendable () -> Date = { Date() })
        throws(CredentialError)
    {
        let bytes = try CredentialFiles.read(p8Path, name: ".p8 key")
        do {
            try self.init(p8PEM: String(decoding: bytes, as: UTF8.self), keyId: keyId, teamId: teamId, now: now)
        } catch {
            throw CredentialError(error.code, "\(p8Path): \(error.message)")
        }
    }

    private static let allowedIdentifierBytes = Set(Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-".utf8))

    /// Token mode presents no client certificate.
    public var tlsIdentity: TLSIdentity? { nil }

    /// How many tokens this instance has signed (for logs, health and tests).
    public var tokensGenerated: Int { state.withLock { $0.generated } }

    /// `bearer <JWT>`: the cached token, or a new one when it is due (see the type's rules).
    public func authorizationHeader() throws -> String? {
        try state.withLock { (s) throws(CredentialError) -> String in
            let time = now()
            if let current = s.current {
                // A clock that went backwards counts as age 0: keep the token.
                let age = max(0, time.timeIntervalSince(current.issuedAt))
                let due = age >= Self.refreshAge || (s.refreshRequested && age >= Self.minimumRegenerationAge)
                if !due { return current.header }
            }
            let header = "bearer " + (try makeJWT(issuedAt: time))
            s.current = (header, time)
            s.refreshRequested = false
            s.generated += 1
            return header
        }
    }

    /// APNs answered 403 ExpiredProviderToken for `header`: refresh on the next call if `header` is the current
    /// token and at least 20 minutes old; otherwise keep it (see the type's rules).
    public func providerTokenExpired(_ header: String) {
        state.withLock { s in
            guard let current = s.current, current.header == header else { return }
            if now().timeIntervalSince(current.issuedAt) >= Self.minimumRegenerationAge {
                s.refreshRequested = true
            }
        }
    }

    /// A signed JWT: base64url(header) . base64url(claims) . base64url(r || s), no padding.
    func makeJWT(issuedAt: Date) throws(CredentialError) -> String {
        let header = #"{"alg":"ES256","kid":"\#(keyId)"}"#
        let claims = #"{"iss":"\#(teamId)","iat":\#(Int64(issuedAt.timeIntervalSince1970.rounded(.down)))}"#
        let signingInput = Self.base64URL(Data(header.utf8)) + "." + Self.base64URL(Data(claims.utf8))
        let signature: P256.Signing.ECDSASignature
        do {
            signature = try key.signature(for: Data(signingInput.utf8))
        } catch {
            throw CredentialError(.unknown("signing"), "cannot sign the provider token: \(error)")
        }
        return signingInput + "." + Self.base64URL(signature.rawRepresentation)
    }

    /// Base64url without padding (RFC 7515).
    static func base64URL(_ data: Data) -> String {
        var text = data.base64EncodedString()
        text = text.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        while text.hasSuffix("=") { text.removeLast() }
        return text
    }
}
