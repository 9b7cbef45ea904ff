/// Where an app's APNs requests go (`endpoint`, `channelEndpoint`, `broadcastEndpoint`): Apple's hosts, the
/// built-in simulator or another HTTPS server. APNs' alone: Web Push endpoints are the subscriptions' own, FCM's is
/// ``FCMSettings/Endpoint``.
public enum APNsEndpoint: Sendable, Equatable, CustomStringConvertible {
    /// `api.push.apple.com:443`.
    case production
    /// `api.sandbox.push.apple.com:443`.
    case development
    /// The built-in simulator from the `simulator` block.
    case simulator
    /// Any other HTTPS server, e.g. a staging proxy.
    case url(host: String, port: Int)

    /// Parses `production`, `development`, `simulator` or `https://host[:port]`.
    public init(parsing text: String) throws(ConfigurationError) {
        switch text {
        case "production": self = .production
        case "development": self = .development
        case "simulator": self = .simulator
        default:
            guard text.hasPrefix("https://") else {
                throw ConfigurationError(
                    "endpoint must be production, development, simulator or an https://host:port URL, not '\(text)'")
            }
            var rest = Substring(text.dropFirst("https://".count))
            if rest.hasSuffix("/") { rest = rest.dropLast() }
            guard !rest.isEmpty, !rest.contains("/") else {
                throw ConfigurationError("endpoint URL must be https://host[:port] without a path: '\(text)'")
            }
            var host = String(rest)
            var port = 443
            if let colon = rest.lastIndex(of: ":"), !rest.hasSuffix("]") {
                guard let p = Int(rest[rest.index(after: colon)...]), (1...65535).contains(p) else {
                    throw ConfigurationError("endpoint URL has a bad port: '\(text)'")
                }
                host = String(rest[..<colon])
                port = p
            }
            self = .url(host: host, port: port)
        }
    }

    /// The environment tokens sent here belong to, when the endpoint implies one.
    public var impliedEnvironment: APNsEnvironment? {
        switch self {
        case .production: .production
        case .development, .simulator: .development
        case .url: nil
        }
    }

    /// The configuration-file spelling.
    public var description: String {
        switch self {
        case .production: "production"
        case .development: "development"
        case .simulator: "simulator"
        case .url(let host, let port): "https://\(host):\(port)"
        }
    }
}
