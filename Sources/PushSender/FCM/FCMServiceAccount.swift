import _CryptoExtras
import Crypto
import Foundation
import PushCore

/// A Google service account, as the JSON file Firebase's console downloads (`type` = `service_account`), and the
/// OAuth 2.0 JWT-bearer assertion (RFC 7523) it signs to get FCM access tokens.
///
/// The assertion: RS256 (RSA PKCS#1 v1.5 with SHA-256, swift-crypto's `_RSA.Signing`), header
/// `{"alg":"RS256","typ":"JWT","kid":private_key_id}`, claims `iss` = `client_email`, `scope` =
/// ``scope``, `aud` = `token_uri`, `iat`, and `exp` at most ``maximumLifetime`` later (Google refuses longer).
/// It is posted to `token_uri` as ``grantRequestBody(issuedAt:)``.
public struct FCMServiceAccount: Sendable {
    /// The OAuth scope that lets an access token send with FCM HTTP v1.
    public static let scope = "https://www.googleapis.com/auth/firebase.messaging"
    /// Google's limit on an assertion's lifetime (`exp` − `iat`): one hour.
    public static let maximumLifetime: TimeInterval = 3600
    /// The JWT-bearer grant type (RFC 7523 §2.1).
    public static let grantType = "urn:ietf:params:oauth:grant-type:jwt-bearer"

    /// `project_id`: the `{project_id}` of `POST /v1/projects/{project_id}/messages:send`.
    public let projectId: String
    /// `client_email`: the assertion's `iss`.
    public let clientEmail: String
    /// `private_key_id`: the assertion header's `kid`, when the file has one.
    public let privateKeyId: String?
    /// `token_uri`: where the assertion is posted, and its `aud` (see ``postingGrants(to:)``).
    public private(set) var tokenURI: String
    private let key: _RSA.Signing.PrivateKey

    /// Parses a service-account file's contents. `source` (the file's path) starts every error message, which
    /// names the field at fault; no message contains key material.
    public init(json: some Collection<UInt8>, source: String) throws(CredentialError) {
        func refuse(_ why: String) -> CredentialError { CredentialError(.invalidInput, "\(source): \(why)") }
        let root: JSONValue
        do {
            root = try JSONValue(parsing: json)
        } catch {
            throw refuse("not a service-account JSON file (\(error))")
        }
        guard root.objectPairs != nil else { throw refuse("not a service-account JSON file (not a JSON object)") }
        func field(_ name: String) throws(CredentialError) -> String {
            guard let value = root[name] else { throw refuse("missing \(name)") }
            guard let text = value.stringValue, !text.isEmpty else { throw refuse("\(name) must be a non-empty string") }
            return text
        }
        let type = try field("type")
        guard type == "service_account" else { throw refuse("type is '\(type)', not 'service_account'") }
        projectId = try field("project_id")
        clientEmail = try field("client_email")
        tokenURI = try field("token_uri")
        guard tokenURI.hasPrefix("https://") else { throw refuse("token_uri must be an https:// URL, not '\(tokenURI)'") }
        privateKeyId = root["private_key_id"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
        let pem = try field("private_key")
        do {
            key = try _RSA.Signing.PrivateKey(pemRepresentation: pem)
        } catch {
            throw refuse("private_key is not an RSA private key (PEM, 2048 bits or more)")
        }
    }

    /// Loads a service-account file. Like every secret file (``SecretFileLoader``), it is refused when other users
    /// may read or write it; `configurationKey` names it in the loader's errors (`apps.example.fcm.serviceAccount`).
    public init(path: String, configurationKey: String = "serviceAccount") throws(CredentialError) {
        let bytes = try CredentialFiles.read(path, name: configurationKey)
        try self.init(json: bytes, source: path)
    }

    /// This account with its grants posted to `uri` (and the assertions' `aud` naming it) instead of the file's
    /// `token_uri`: the simulator's or a test server's token endpoint.
    public func postingGrants(to uri: String) -> FCMServiceAccount {
        var copy = self
        copy.tokenURI = uri
        return copy
    }

    /// The signed assertion for a grant at `issuedAt`, valid for `lifetime` (capped at ``maximumLifetime``).
    public func assertion(issuedAt: Date, lifetime: TimeInterval = FCMServiceAccount.maximumLifetime) throws(CredentialError) -> String {
        let iat = Int64(issuedAt.timeIntervalSince1970.rounded(.down))
        let exp = iat + Int64(min(max(lifetime, 1), Self.maximumLifetime).rounded(.down))
        var header: [(String, JSONValue)] = [("alg", .string("RS256")), ("typ", .string("JWT"))]
        if let privateKeyId { header.append(("kid", .string(privateKeyId))) }
        let claims: [(String, JSONValue)] = [
            ("iss", .string(clientEmail)), ("scope", .string(Self.scope)), ("aud", .string(tokenURI)),
            ("iat", .int(iat)), ("exp", .int(exp)),
        ]
        let signingInput = Self.segment(.object(header)) + "." + Self.segment(.object(claims))
        let signature: _RSA.Signing.RSASignature
        do {
            signature = try key.signature(for: Data(signingInput.utf8), padding: .insecurePKCS1v1_5)
        } catch {
            throw CredentialError(.unknown("signing"), "cannot sign the service-account assertion: \(error)")
        }
        return signingInput + "." + TokenCredentials.base64URL(signature.rawRepresentation)
    }

    /// The `application/x-www-form-urlencoded` body of the token request: `grant_type` and `assertion` (the
    /// assertion is base64url and dots, which need no escaping).
    public func grantRequestBody(issuedAt: Date) throws(CredentialError) -> String {
        "grant_type=" + Self.formEscaped(Self.grantType) + "&assertion=" + (try assertion(issuedAt: issuedAt))
    }

    /// One JWT segment: base64url of the compact JSON.
    private static func segment(_ value: JSONValue) -> String {
        var bytes: [UInt8] = []
        value.encode(into: &bytes)
        return TokenCredentials.base64URL(Data(bytes))
    }

    /// Percent-escapes everything but unreserved characters (RFC 3986), as a form value.
    static func formEscaped(_ text: String) -> String { FormEncoding.escaped(text) }
}
