/// An app's UnifiedPush settings (`apps.ID.unifiedpush`): the VAPID key that identifies this server to distributors
/// (RFC 8292; SERV_1.2.0 recommends it, and an app may hand its public half to its distributor, AND_3.0.0, so the
/// distributor refuses anyone else), its contact, and what is exempt from the address check.
///
/// Why a section of its own rather than Web Push's: an app with UnifiedPush is often Android only (no browsers), and
/// its key is what its Android code gives the distributor; the two may share one key file when the operator wants.
public struct UnifiedPushSettings: Sendable, Equatable {
    /// The VAPID private key: a PEM file holding a P-256 key (`pushctl webpush key new`), a secret file.
    public var vapidKey: String
    /// The contact in every VAPID token: `mailto:…` or `https:…`.
    public var subject: String
    /// Hosts (`host`, `host:port`) and networks (CIDR) exempt from the address check (``UnifiedPushHostPolicy``).
    public var exemptHosts: [String]
    /// An extra trust anchor (PEM) for distributors' TLS (a self-hosted one, the simulator); never a switch to turn
    /// verification off.
    public var caFile: String?
    /// The address rule, parsed from ``exemptHosts``.
    public let hostPolicy: UnifiedPushHostPolicy

    /// The longest endpoint accepted (SERV_1.2.0: an endpoint is at most 1000 bytes).
    public static let maximumEndpointLength = 1000

    /// Creates settings; `subject` and `exemptHosts` must parse (the error names the field).
    public init(vapidKey: String, subject: String, exemptHosts: [String] = [], caFile: String? = nil) throws(FieldError) {
        if let problem = WebPushSettings.subjectProblem(subject) { throw FieldError(field: "subject", message: problem) }
        self.vapidKey = vapidKey
        self.subject = subject
        self.exemptHosts = exemptHosts
        self.caFile = caFile
        hostPolicy = try UnifiedPushHostPolicy(exemptHosts: exemptHosts)
    }
}
