/// An app's Web Push settings (`apps.ID.webpush`): the VAPID key that identifies this server to the push services,
/// the contact they may reach (RFC 8292 `sub`), and where subscriptions may point.
public struct WebPushSettings: Sendable, Equatable {
    /// The VAPID private key: a PEM file holding a P-256 key (`pushctl webpush key new`); a secret file with the
    /// same mode rules as a `.p8`.
    public var vapidKey: String
    /// The contact in every VAPID token: `mailto:…` or `https:…` (Apple answers 403 BadJwtToken to anything else).
    public var subject: String
    /// Hosts added to the known push services' (`host[:port]` or `*.domain[:port]`): a self-hosted push service,
    /// the simulator, a test's.
    public var allowedHosts: [String]
    /// An extra trust anchor (PEM) for the push services' TLS; never a switch to turn verification off.
    public var caFile: String?
    /// True to send Apple's Declarative Web Push format (Safari 18.4+) instead of the JSON a service worker reads.
    public var declarative: Bool
    /// Where subscriptions may point: the known push services plus ``allowedHosts`` (checked when decoded).
    public let hostPolicy: WebPushHostPolicy

    /// Creates settings; `allowedHosts` must parse (the error names `field`).
    public init(
        vapidKey: String, subject: String, allowedHosts: [String] = [], caFile: String? = nil, declarative: Bool = false
    ) throws(FieldError) {
        if let problem = Self.subjectProblem(subject) { throw FieldError(field: "subject", message: problem) }
        self.vapidKey = vapidKey
        self.subject = subject
        self.allowedHosts = allowedHosts
        self.caFile = caFile
        self.declarative = declarative
        hostPolicy = try WebPushHostPolicy(allowedHosts: allowedHosts)
    }

    /// Why `subject` is not a contact the push services accept, or nil (RFC 8292 §2.1): `mailto:` and an address
    /// (`user@domain.tld`), or an `https://` URL whose host is a name. The configuration is refused with this, so a
    /// server never starts with a subject its VAPID signer would refuse.
    public static func subjectProblem(_ subject: String) -> String? {
        let printable = !subject.isEmpty && subject.utf8.count <= 512 && subject.utf8.allSatisfy { (0x21...0x7E).contains($0) }
        if printable, subject.hasPrefix("mailto:") {
            let parts = subject.dropFirst("mailto:".count).split(separator: "@", omittingEmptySubsequences: false)
            if parts.count == 2, !parts[0].isEmpty, parts[1].contains("."), !parts[1].hasPrefix("."), !parts[1].hasSuffix(".") { return nil }
        }
        if printable, subject.hasPrefix("https://") {
            let authority = subject.dropFirst("https://".count).prefix { $0 != "/" && $0 != "?" && $0 != "#" }
            if let endpoint = try? WebPushEndpoint(parsing: "https://\(authority)/x"), endpoint.address == nil { return nil }
        }
        return "subject must be a mailto: address or an https: URL where the push service can reach you (RFC 8292 §2.1), not '\(subject.prefix(80))'"
    }
}
