import _CryptoExtras
import Crypto
import Foundation
import PushCore

/// A Huawei service account, as the key file the API Console downloads (`project_id`, `key_id`, `private_key`,
/// `sub_account`, …), and the JWT it signs for Push Kit's scenario API (Huawei, "Generating a JWT Based on a Service
/// Account", developer.huawei.com/consumer/en/doc/harmonyos-guides/push-jwt-token).
///
/// The JWT: header `{"kid":key_id,"typ":"JWT","alg":"PS256"}`, claims `aud` = ``HarmonyOSSettings/audience``,
/// `iss` = `sub_account`, `exp`, `iat`, signed with SHA256withRSA/PSS (PS256: swift-crypto's `_RSA.Signing` with
/// `.PSS` padding). Huawei advises a lifetime of 3600 s, the JWT reused within it; it is sent as
/// `Authorization: Bearer <JWT>` itself — HarmonyOS 5 and later no longer take OAuth access tokens.
public struct HarmonyOSServiceAccount: Sendable, CustomStringConvertible {
    /// The JWT's lifetime (`exp` − `iat`): Huawei's advice, and the longest this sender signs.
    public static let lifetime: TimeInterval = 3600

    /// `project_id`: should be the app's AppGallery Connect project (`apps.ID.harmonyos.projectId`).
    public let projectId: String
    /// `key_id`: the JWT header's `kid`.
    public let keyId: String
    /// `sub_account`: the JWT's `iss`.
    public let subAccount: String
    private let key: _RSA.Signing.PrivateKey

    /// Parses a key file's contents. `source` (the file's path) starts every error message, which names the field at
    /// fault; no message contains key material.
    public init(json: some Collection<UInt8>, source: String) throws(CredentialError) {
        func refuse(_ why: String) -> CredentialError { CredentialError(.invalidInput, "\(source): \(why)") }
        let root: JSONValue
        do {
            root = try JSONValue(parsing: json)
        } catch {
            throw refuse("not a service-account key file (\(error))")
        }
        guard root.objectPairs != nil else { throw refuse("not a service-account key file (not a JSON object)") }
        func field(_ name: String) throws(CredentialError) -> String {
            guard let value = root[name] else { throw refuse("missing \(name)") }
            guard let text = value.stringValue, !text.isEmpty else { throw refuse("\(name) must be a non-empty string") }
            return text
        }
        projectId = try field("project_id")
        keyId = try field("key_id")
        subAccount = try field("sub_account")
        let pem = try field("private_key")
        do {
            key = try _RSA.Signing.PrivateKey(pemRepresentation: pem)
        } catch {
            throw refuse("private_key is not an RSA private key (PEM, 2048 bits or more)")
        }
    }

    /// Loads a key file. Like every secret file (``SecretFileLoader``), it is refused when other users may read or
    /// write it; `configurationKey` names it in the loader's errors (`apps.example.harmonyos.serviceAccount`).
    public init(path: String, configurationKey: String = "serviceAccount") throws(CredentialError) {
        let bytes = try CredentialFiles.read(path, name: configurationKey)
        try self.init(json: bytes, source: path)
    }

    /// The signed JWT issued at `issuedAt`, valid for `lifetime` (capped at ``lifetime``).
    public func jwt(issuedAt: Date, lifetime: TimeInterval = HarmonyOSServiceAccount.lifetime) throws(CredentialError) -> String {
        let iat = Int64(issuedAt.timeIntervalSince1970.rounded(.down))
        let exp = iat + Int64(min(max(lifetime, 1), Self.lifetime).rounded(.down))
        let header: [(String, JSONValue)] = [("kid", .string(keyId)), ("typ", .string("JWT")), ("alg", .string("PS256"))]
        let claims: [(String, JSONValue)] = [
            ("aud", .string(HarmonyOSSettings.audience)), ("iss", .string(subAccount)), ("exp", .int(exp)), ("iat", .int(iat)),
        ]
        let signingInput = Self.segment(.object(header)) + "." + Self.segment(.object(claims))
        let signature: _RSA.Signing.RSASignature
        do {
            signature = try key.signature(for: Data(signingInput.utf8), padding: .PSS)
        } catch {
            throw CredentialError(.unknown("signing"), "cannot sign the service-account JWT: \(error)")
        }
        return signingInput + "." + TokenCredentials.base64URL(signature.rawRepresentation)
    }

    /// The key's public half in PEM (what a verifier trusts: the simulator).
    public var publicKeyPEM: String { key.publicKey.pemRepresentation }

    public var description: String { "HarmonyOS service account \(subAccount) (key \(keyId), project \(projectId))" }

    private static func segment(_ value: JSONValue) -> String {
        var bytes: [UInt8] = []
        value.encode(into: &bytes)
        return TokenCredentials.base64URL(Data(bytes))
    }
}

extension AccessTokenCache {
    /// A cache of `account`'s JWTs (``AccessTokenCache/init(selfSignedLifetime:now:sign:)``): each one signed at the
    /// cache's `now`, an hour long, re-signed before it expires or once after Push Kit refused it.
    public convenience init(harmonyOSAccount account: HarmonyOSServiceAccount, now: @escaping @Sendable () -> Date = { Date() }) {
        self.init(selfSignedLifetime: HarmonyOSServiceAccount.lifetime, now: now) { (issuedAt) throws(CredentialError) in
            try account.jwt(issuedAt: issuedAt)
        }
    }
}
