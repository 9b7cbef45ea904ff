/// An app's Firebase Cloud Messaging settings (`apps.ID.fcm`): the Google service account that signs the OAuth 2.0
/// grants, where messages go, and an extra trust anchor. With them the app's Android devices can register and be sent
/// to through FCM HTTP v1 (docs/fcm.md).
public struct FCMSettings: Sendable, Equatable {
    /// Where an app's FCM messages and token grants go.
    public enum Endpoint: Sendable, Equatable, CustomStringConvertible {
        /// `https://fcm.googleapis.com`, grants at the service account's `token_uri`.
        case production
        /// The built-in simulator (the configuration's `simulator` block): messages and grants (`/token`) both go there,
        /// trusted through its CA.
        case simulator
        /// Another HTTPS server playing FCM (`https://host:port`): messages and grants (`/token`) both go there.
        case url(host: String, port: Int)

        /// Parses `production`, `simulator` or `https://host[:port]`.
        public init(parsing text: String) throws(ConfigurationError) {
            switch text {
            case "production": self = .production
            case "simulator": self = .simulator
            default:
                guard text.hasPrefix("https://"), case .url(let host, let port) = try? APNsEndpoint(parsing: text) else {
                    throw ConfigurationError("endpoint must be production, simulator or an https://host:port URL, not '\(text)'")
                }
                self = .url(host: host, port: port)
            }
        }

        /// The configuration-file spelling.
        public var description: String {
            switch self {
            case .production: "production"
            case .simulator: "simulator"
            case .url(let host, let port): "https://\(host):\(port)"
            }
        }
    }

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
