import Crypto
import Foundation
import PushCore

/// Verifies APNs provider tokens (`authorization: bearer <JWT>`, ES256) against configured keys.
struct ProviderTokenVerifier: Sendable {
    /// A token that passed verification.
    struct Verified: Sendable, Equatable {
        var token: String
        var keyId: String
        var teamId: String
        var issuedAtSeconds: Int64
        /// Topics the key may push to; nil means any.
        var topics: Set<String>?
    }

    /// Immutable after init; Crypto's key types just lack the Sendable annotation.
    private struct Key: @unchecked Sendable {
        var teamId: String
        var publicKey: P256.Signing.PublicKey
        var topics: Set<String>?
    }

    private let keys: [String: Key]
    /// Seconds after `iat` during which a token is accepted.
    let lifetimeSeconds: Int64

    init(keys: [SimulatorJWTKey], lifetimeSeconds: Int64) throws(SimulatorError) {
        var map: [String: Key] = [:]
        for key in keys {
            // Accept the .p8 signing key itself too: only its public half is kept.
            let publicKey =
                (try? P256.Signing.PublicKey(pemRepresentation: key.publicKeyPEM))
                ?? (try? P256.Signing.PrivateKey(pemRepresentation: key.publicKeyPEM))?.publicKey
            guard let publicKey else {
                throw SimulatorError(.badJWTKey, "provider-token key \(key.keyId): not a P-256 PEM key")
            }
            map[key.keyId] = Key(teamId: key.teamId, publicKey: publicKey, topics: key.topics.map(Set.init))
        }
        self.keys = map
        self.lifetimeSeconds = lifetimeSeconds
    }

    /// Checks a cached token's age; returns the reason when it has expired.
    func checkAge(_ verified: Verified, nowMs: Int64) -> APNsReason? {
        verified.issuedAtSeconds + lifetimeSeconds < nowMs / 1000 ? .expiredProviderToken : nil
    }

    /// Verifies the `authorization` header value.
    func verify(authorization: String?, nowMs: Int64) -> Result<Verified, ReasonError> {
        guard let authorization, !authorization.isEmpty else { return .failure(.init(.missingProviderToken)) }
        guard authorization.count > 7, authorization.prefix(7).lowercased() == "bearer " else {
            return .failure(.init(.missingProviderToken))
        }
        let token = String(authorization.dropFirst(7)).trimmingCharacters(in: .whitespaces)
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
            let headerBytes = Self.base64URLDecode(parts[0]),
            let claimBytes = Self.base64URLDecode(parts[1]),
            let signatureBytes = Self.base64URLDecode(parts[2]),
            let header = try? JSONValue(parsing: headerBytes),
            let claims = try? JSONValue(parsing: claimBytes),
            header["alg"]?.stringValue == "ES256",
            let keyId = header["kid"]?.stringValue,
            let teamId = claims["iss"]?.stringValue,
            let issuedAt = claims["iat"]?.intValue
        else { return .failure(.init(.invalidProviderToken)) }
        guard let key = keys[keyId], key.teamId == teamId else { return .failure(.init(.invalidProviderToken)) }
        let signingInput = Array(token.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
        guard let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureBytes),
            key.publicKey.isValidSignature(signature, for: signingInput)
        else { return .failure(.init(.invalidProviderToken)) }
        let nowSeconds = nowMs / 1000
        // A token from the future is as wrong as a forged one; allow a minute of clock skew.
        if issuedAt > nowSeconds + 60 { return .failure(.init(.invalidProviderToken)) }
        let verified = Verified(
            token: token, keyId: keyId, teamId: teamId, issuedAtSeconds: issuedAt, topics: key.topics)
        if let reason = checkAge(verified, nowMs: nowMs) { return .failure(.init(reason)) }
        return .success(verified)
    }

    static func base64URLDecode(_ text: Substring) -> [UInt8]? {
        var s = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while s.count % 4 != 0 { s.append("=") }
        return Data(base64Encoded: s).map { Array($0) }
    }
}

/// An APNs reason carried as an error (for `Result`).
struct ReasonError: Error, Equatable {
    var reason: APNsReason
    init(_ reason: APNsReason) { self.reason = reason }
}
