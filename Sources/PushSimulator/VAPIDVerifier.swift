import Crypto
import Foundation
import PushCore

/// RFC 8292 (VAPID) as a push service checks it: `Authorization: vapid t=<JWT>, k=<key>`, the JWT signed with ES256
/// by the key `k` names, its claims `aud` (the push resource's origin), `exp` (in the future, at most 24 hours
/// ahead) and `sub` (a `mailto:` or `https:` contact, which Apple requires). Written against the RFC alone: it shares
/// no code with PushSender's signing.
struct VAPIDVerifier: Sendable {
    /// A header whose signature verified: what the per-request checks (audience, expiry, key) still look at.
    struct Verified: Sendable, Equatable {
        /// The whole `Authorization` value, to recognise the same header on the next request.
        var authorization: String
        /// The application server's public key (65 octets, uncompressed P-256).
        var key: [UInt8]
        var audience: String
        var subject: String
        var expiresAtSeconds: Int64
    }

    /// At most how far ahead `exp` may be (RFC 8292 §2: "MUST NOT be more than 24 hours from the time of the
    /// request").
    static let maximumLifetimeSeconds: Int64 = 24 * 3600

    /// Parses the header and verifies the JWT's signature against `k` and the form of its claims; the time and
    /// audience are checked by ``check(_:origin:nowMs:)``.
    static func verify(authorization: String?) -> Result<Verified, WebPushRejection> {
        guard let authorization, !authorization.isEmpty else {
            return .failure(.init(.missingAuthorization, "no Authorization header: RFC 8292 needs `vapid t=<JWT>, k=<key>`"))
        }
        let trimmed = authorization.trimmingCharacters(in: .whitespaces)
        guard let space = trimmed.firstIndex(of: " "), trimmed[..<space].lowercased() == "vapid" else {
            return .failure(.init(
                .missingAuthorization,
                "the Authorization scheme must be `vapid` (RFC 8292), not `\(trimmed.prefix(while: { $0 != " " }))`"))
        }
        var token: String?
        var key: String?
        for parameter in trimmed[space...].split(separator: ",") {
            let pair = parameter.trimmingCharacters(in: .whitespaces)
            guard let equals = pair.firstIndex(of: "=") else {
                return .failure(.init(.missingAuthorization, "vapid parameter `\(pair)` has no value"))
            }
            let name = pair[..<equals].lowercased()
            let value = String(pair[pair.index(after: equals)...])
            switch name {
            case "t": if token != nil { return .failure(.init(.badJwtToken, "vapid parameter t given twice")) } else { token = value }
            case "k": if key != nil { return .failure(.init(.badJwtToken, "vapid parameter k given twice")) } else { key = value }
            default: break
            }
        }
        guard let token, let key else {
            return .failure(.init(.missingAuthorization, "the vapid Authorization needs both t (the JWT) and k (the public key)"))
        }
        guard let keyBytes = StrictBase64URL.decode(key), keyBytes.count == 65, keyBytes.first == 0x04,
            let publicKey = try? P256.Signing.PublicKey(x963Representation: keyBytes)
        else {
            return .failure(.init(.badJwtToken, "k is not an uncompressed P-256 public key in base64url"))
        }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = StrictBase64URL.decode(parts[0]), let claimBytes = StrictBase64URL.decode(parts[1]),
            let signatureBytes = StrictBase64URL.decode(parts[2]),
            let header = try? JSONValue(parsing: headerBytes), let claims = try? JSONValue(parsing: claimBytes)
        else {
            return .failure(.init(.badJwtToken, "t is not a JWT (three base64url parts: JSON header, JSON claims, signature)"))
        }
        guard header["alg"]?.stringValue == "ES256" else {
            return .failure(.init(.badJwtToken, "the JWT's alg must be ES256"))
        }
        if let type = header["typ"], type.stringValue?.uppercased() != "JWT" {
            return .failure(.init(.badJwtToken, "the JWT's typ must be JWT"))
        }
        let signingInput = Array(token.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
        guard signatureBytes.count == 64, let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureBytes),
            publicKey.isValidSignature(signature, for: signingInput)
        else {
            return .failure(.init(.badJwtToken, "the JWT's ES256 signature does not verify with k"))
        }
        guard let audience = claims["aud"]?.stringValue else {
            return .failure(.init(.badJwtToken, "the JWT has no aud claim (the push service's origin)"))
        }
        guard let expires = claims["exp"]?.intValue else {
            return .failure(.init(.badJwtToken, "the JWT has no exp claim (seconds since 1970, at most 24 hours ahead)"))
        }
        guard let subject = claims["sub"]?.stringValue, isContact(subject) else {
            return .failure(.init(
                .badJwtToken, "the JWT's sub must be a mailto: address or an https: URL, not \(claims["sub"]?.stringValue.map { "`\($0)`" } ?? "missing")"))
        }
        return .success(Verified(
            authorization: authorization, key: keyBytes, audience: audience, subject: subject, expiresAtSeconds: expires))
    }

    /// The checks that depend on the request: the audience is the push resource's origin exactly, and `exp` is in
    /// the future but no more than 24 hours ahead.
    static func check(_ verified: Verified, origin: String, nowMs: Int64) -> WebPushRejection? {
        guard verified.audience == origin else {
            return .init(.badJwtToken, "the JWT's aud must be the push resource's origin \(origin), not \(verified.audience)")
        }
        let now = nowMs / 1000
        guard verified.expiresAtSeconds > now else {
            return .init(.expiredJwtToken, "the JWT expired at \(verified.expiresAtSeconds) (now \(now))")
        }
        guard verified.expiresAtSeconds - now <= maximumLifetimeSeconds else {
            return .init(
                .badJwtToken,
                "the JWT's exp is \(verified.expiresAtSeconds - now) s ahead: RFC 8292 allows at most 24 hours (86400 s)")
        }
        return nil
    }

    /// A contact as RFC 8292 §2.1 describes it: a `mailto:` URI with an address, or an `https:` URI with a host.
    static func isContact(_ subject: String) -> Bool {
        if subject.hasPrefix("mailto:") {
            let address = subject.dropFirst("mailto:".count)
            guard let at = address.firstIndex(of: "@") else { return false }
            let local = address[..<at], domain = address[address.index(after: at)...]
            return !local.isEmpty && !domain.isEmpty && !address.contains(where: { $0 == " " || $0 == "\n" })
        }
        if subject.hasPrefix("https://") {
            guard let url = URLComponents(string: subject), url.scheme == "https", let host = url.host else { return false }
            return !host.isEmpty
        }
        return false
    }
}
