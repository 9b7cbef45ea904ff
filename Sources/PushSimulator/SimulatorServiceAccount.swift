import _CryptoExtras
import Foundation
import PushCore

/// A Google service account the simulator's OAuth token endpoint trusts (``OAuthTokenService``): assertions whose
/// `iss` is ``clientEmail`` must be signed by ``publicKeyPEM``'s key (and name ``privateKeyId`` as `kid` when they
/// name one). ``makeDevelopment(projectId:tokenURI:)`` issues one, as Google's console does when it downloads a key.
public struct SimulatorServiceAccount: Sendable, Equatable {
    /// `client_email`: the assertions' `iss`.
    public var clientEmail: String
    /// `private_key_id`: the `kid` assertions may name.
    public var privateKeyId: String?
    /// The RSA public key as PEM (`-----BEGIN PUBLIC KEY-----`).
    public var publicKeyPEM: String
    /// `token_uri` as the account's file states it: accepted as an assertion's `aud` (besides the endpoint's own URL
    /// and Google's, see ``OAuthTokenService``).
    public var tokenURI: String?
    /// `project_id`: the project its access tokens may send FCM messages for (nil: any).
    public var projectId: String?

    /// Creates an account from its parts.
    public init(clientEmail: String, privateKeyId: String?, publicKeyPEM: String, tokenURI: String? = nil, projectId: String? = nil) {
        self.clientEmail = clientEmail
        self.privateKeyId = privateKeyId
        self.publicKeyPEM = publicKeyPEM
        self.tokenURI = tokenURI
        self.projectId = projectId
    }

    /// The account a service-account JSON file describes (its private key's public half): how the simulator trusts a
    /// file it issued earlier. Errors name the field at fault, never key material.
    public init(serviceAccountJSON json: some Collection<UInt8>, source: String) throws(SimulatorError) {
        func refuse(_ why: String) -> SimulatorError { SimulatorError(.badConfiguration, "\(source): \(why)") }
        guard let root = try? JSONValue(parsing: json), root.objectPairs != nil else {
            throw refuse("not a service-account JSON file")
        }
        guard root["type"]?.stringValue == "service_account" else { throw refuse("type must be 'service_account'") }
        guard let email = root["client_email"]?.stringValue, !email.isEmpty else { throw refuse("missing client_email") }
        guard let pem = root["private_key"]?.stringValue, !pem.isEmpty else { throw refuse("missing private_key") }
        guard let key = try? _RSA.Signing.PrivateKey(pemRepresentation: pem) else {
            throw refuse("private_key is not an RSA private key (PEM, 2048 bits or more)")
        }
        self.init(
            clientEmail: email, privateKeyId: root["private_key_id"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 },
            publicKeyPEM: key.publicKey.pemRepresentation, tokenURI: root["token_uri"]?.stringValue,
            projectId: root["project_id"]?.stringValue)
    }

    /// A new development service account: a fresh RSA-2048 key and the Google-format JSON file that holds it
    /// (`type`, `project_id`, `private_key_id`, `private_key` as PKCS#8 PEM, `client_email`, `client_id`,
    /// `auth_uri`, `token_uri` = `tokenURI`, the certificate URLs and `universe_domain`), which google-auth,
    /// firebase-admin and PushSender load unchanged. The JSON holds the private key: write it mode 0600.
    public static func makeDevelopment(
        projectId: String = "pushprovider-dev", tokenURI: String
    ) throws(SimulatorError) -> (account: SimulatorServiceAccount, json: String) {
        let key: _RSA.Signing.PrivateKey
        do { key = try _RSA.Signing.PrivateKey(keySize: .bits2048) } catch {
            throw SimulatorError(.badConfiguration, "cannot generate an RSA key: \(error)")
        }
        var random = SystemRandomNumberGenerator()
        let keyId = (0..<20).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &random)) }.joined()
        let clientId = "1" + (0..<20).map { _ in String(Int.random(in: 0...9, using: &random)) }.joined()
        let email = "pushprovider-dev@\(projectId).iam.gserviceaccount.com"
        let fields: [(String, JSONValue)] = [
            ("type", .string("service_account")),
            ("project_id", .string(projectId)),
            ("private_key_id", .string(keyId)),
            ("private_key", .string(key.pkcs8PEMRepresentation + "\n")),
            ("client_email", .string(email)),
            ("client_id", .string(clientId)),
            ("auth_uri", .string("https://accounts.google.com/o/oauth2/auth")),
            ("token_uri", .string(tokenURI)),
            ("auth_provider_x509_cert_url", .string("https://www.googleapis.com/oauth2/v1/certs")),
            ("client_x509_cert_url", .string(
                "https://www.googleapis.com/robot/v1/metadata/x509/" + email.replacingOccurrences(of: "@", with: "%40"))),
            ("universe_domain", .string("googleapis.com")),
        ]
        let account = SimulatorServiceAccount(
            clientEmail: email, privateKeyId: keyId, publicKeyPEM: key.publicKey.pemRepresentation, tokenURI: tokenURI,
            projectId: projectId)
        return (account, JSONValue.object(fields).encodedString + "\n")
    }
}
