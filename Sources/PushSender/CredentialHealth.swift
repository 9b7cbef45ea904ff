import Foundation

/// A summary of loaded credentials for health endpoints and logs. Holds no secret.
public struct CredentialHealth: Sendable, Equatable, Codable {
    /// `certificate` or `token`.
    public var kind: String
    /// The client certificate's facts (certificate mode).
    public var certificate: CertificateFacts?
    /// Days until the certificate expires (certificate mode; negative when expired).
    public var daysLeft: Int?
    /// Whether the certificate has expired (always false in token mode).
    public var expired: Bool
    /// The signing key id (token mode).
    public var keyId: String?
    /// The team id (token mode).
    public var teamId: String?

    /// Describes `provider` at `now`. Providers other than this module's report kind `other`.
    public init(_ provider: any CredentialProvider, now: Date) {
        switch provider {
        case let certificate as CertificateCredentials:
            kind = "certificate"
            self.certificate = certificate.facts
            daysLeft = certificate.facts.daysLeft(now: now)
            expired = certificate.facts.isExpired(now: now)
        case let token as TokenCredentials:
            kind = "token"
            keyId = token.keyId
            teamId = token.teamId
            expired = false
        default:
            kind = "other"
            expired = false
        }
    }
}
