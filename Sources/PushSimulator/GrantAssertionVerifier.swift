import _CryptoExtras
import Foundation
import PushCore

/// Google's checks of an OAuth 2.0 JWT-bearer assertion (RFC 7523, "Using OAuth 2.0 for Server to Server
/// Applications"), strictly and in the order Google reports them: the JWT's form, a service account the simulator
/// trusts as `iss`, `kid` (when present) naming that account's key, the RS256 signature, `aud`, the times and the
/// scope. Pure: the accounts, the accepted audiences and the time are passed in. Written against Google's
/// documentation alone: it shares no code with PushSender's signing.
struct GrantAssertionVerifier: Sendable {
    /// A refusal as Google words it: the OAuth error code (RFC 6749 §5.2) and its `error_description`.
    struct Refusal: Error, Sendable, Equatable {
        var error: String
        var description: String
    }

    /// What a verified assertion grants.
    struct Verified: Sendable, Equatable {
        var clientEmail: String
        var scopes: [String]
    }

    /// The only scope the simulator grants (it plays FCM, nothing else of Google's).
    static let firebaseMessagingScope = "https://www.googleapis.com/auth/firebase.messaging"
    /// Google's token endpoint: the `aud` Google's own client libraries sign whatever the file's `token_uri` says
    /// (google-auth's service-account credentials), which Google accepts.
    static let googleTokenEndpoint = "https://oauth2.googleapis.com/token"
    /// Google's limit on `exp` − `iat`: one hour.
    static let maximumLifetimeSeconds: Int64 = 3600
    /// Clock skew tolerated between the signer and the endpoint, each way.
    static let skewSeconds: Int64 = 60

    /// Google's words for an assertion outside its time rules.
    static let timeframe =
        "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim."

    /// Verifies `assertion` against `accounts` (by `client_email`); `audiences` are the `aud` values accepted.
    static func verify(
        assertion: String, accounts: [String: ServiceAccountKey], audiences: Set<String>, nowSeconds: Int64
    ) -> Result<Verified, Refusal> {
        func refuse(_ description: String, _ error: String = "invalid_grant") -> Result<Verified, Refusal> {
            .failure(Refusal(error: error, description: description))
        }
        let parts = assertion.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = StrictBase64URL.decode(parts[0]), let claimBytes = StrictBase64URL.decode(parts[1]),
            let signatureBytes = StrictBase64URL.decode(parts[2]),
            let header = try? JSONValue(parsing: headerBytes), header.objectPairs != nil,
            let claims = try? JSONValue(parsing: claimBytes), claims.objectPairs != nil
        else {
            return refuse("Invalid JWT: the assertion is not a JWT (three base64url parts: JSON header, JSON claims, signature)")
        }
        guard header["alg"]?.stringValue == "RS256" else {
            return refuse("Invalid JWT: alg must be RS256, not \(header["alg"]?.stringValue ?? "missing")")
        }
        guard let issuer = claims["iss"]?.stringValue, !issuer.isEmpty else { return refuse("Invalid JWT: no iss claim") }
        guard let account = accounts[issuer] else { return refuse("Invalid grant: account not found") }
        if let kid = header["kid"] {
            // A kid that is not this account's key: the signature cannot be checked against the key it names.
            guard kid.stringValue == account.keyId else { return refuse("Invalid JWT Signature.") }
        }
        let signingInput = Array(assertion.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
        guard account.publicKey.isValidSignature(
            _RSA.Signing.RSASignature(rawRepresentation: signatureBytes), for: signingInput, padding: .insecurePKCS1v1_5)
        else { return refuse("Invalid JWT Signature.") }
        guard let audience = claims["aud"]?.stringValue, audiences.contains(audience) else {
            return refuse("Invalid JWT: Failed audience check. The right audience is \(googleTokenEndpoint)")
        }
        guard let issuedAt = claims["iat"]?.intValue, let expires = claims["exp"]?.intValue,
            expires > issuedAt, expires - issuedAt <= maximumLifetimeSeconds,
            issuedAt <= nowSeconds + skewSeconds, expires > nowSeconds - skewSeconds
        else { return refuse(timeframe) }
        let scopes = (claims["scope"]?.stringValue ?? "").split(separator: " ").map(String.init)
        guard !scopes.isEmpty else { return refuse("Empty or missing scope not allowed.", "invalid_scope") }
        guard scopes.contains(firebaseMessagingScope) else {
            return refuse("The simulator grants only \(firebaseMessagingScope); the assertion asks for \(scopes.joined(separator: " "))", "invalid_scope")
        }
        return .success(Verified(clientEmail: issuer, scopes: scopes))
    }

    /// A trusted account's verification key.
    struct ServiceAccountKey: @unchecked Sendable {
        // @unchecked: _RSA's key types are immutable but lack the Sendable annotation.
        var keyId: String?
        var publicKey: _RSA.Signing.PublicKey
        var tokenURI: String?
        var projectId: String? = nil
    }
}
