/// An app's Firebase Cloud Messaging settings (`apps.ID.fcm`): the Google service account that signs the OAuth 2.0
/// grants, where messages go, and an extra trust anchor. With them the app's Android devices can register and be sent
/// to through FCM HTTP v1 (docs/fcm.md).
public struct FCMSettings: Sendable, Equatable {
    /// Where an app's FCM messages and token grants go (``ServiceEndpoint``: the token endpoint is the account's
    /// `token_uri` in production, the endpoint's `/token` otherwise).
    public typealias Endpoint = ServiceEndpoint

    /// FCM HTTP v1's host.
    public static let productionHost = "fcm.googleapis.com"
    /// The path of the token endpoint on the simulator and on an `https://host:port` endpoint.
    public static let tokenPath = "/token"

    /// The service-account JSON file Firebase's console downloads (`project_id`, `client_email`, `private_key`,
    /// `token_uri`); a secret file with the same mode rules as a `.p8` (``SecretFile``).
    public var serviceAccount: String
    /// Where messages go. Default `production`.
    public var endpoint: Endpoint
    /// An extra trust anchor (PEM) for the endpoint and its token endpoint; never a switch to turn verification off.
    public var caFile: String?

    /// Creates settings.
    public init(serviceAccount: String, endpoint: Endpoint = .production, caFile: String? = nil) {
        self.serviceAccount = serviceAccount
        self.endpoint = endpoint
        self.caFile = caFile
    }
}
