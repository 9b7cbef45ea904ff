/// Where a service that takes OAuth access tokens sends (FCM's and Huawei Push Kit's `endpoint` key): the service's
/// production hosts, the built-in simulator, or another HTTPS server playing the service. One type, so the keys
/// read alike and a policy about them (what a URL may be) lives in one place.
public enum ServiceEndpoint: Sendable, Equatable, CustomStringConvertible {
    /// The service's own hosts (FCM: `https://fcm.googleapis.com`, grants at the service account's `token_uri`;
    /// Push Kit: `https://push-api.cloud.huawei.com`, grants at Huawei's OAuth host).
    case production
    /// The built-in simulator (the configuration's `simulator` block): messages and grants both go there,
    /// trusted through its CA.
    case simulator
    /// Another HTTPS server playing the service (`https://host:port`): messages and grants both go there.
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
