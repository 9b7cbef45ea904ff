/// Where Web Push may send (server-side request forgery): subscriptions come from clients, so an endpoint is
/// accepted only when its host is one of the known push services' (``defaultHosts``) or one the configuration
/// adds (`apps.ID.webpush.allowedHosts`: a self-hosted push service, the simulator, a test's), and its address is
/// never this machine's or its network's (``IPAddress/refusal``).
///
/// Registration calls ``check(_:)`` (the 400 names the host); the transport, after resolving an allowed name,
/// calls ``refusal(address:for:)`` for every address before connecting to it (a public name can resolve to
/// 127.0.0.1). The one exception to the address rule is a host the operator listed exactly (not a wildcard):
/// naming `127.0.0.1:4443` or `push.internal:8443` in the configuration is the operator's decision to send there.
public struct WebPushHostPolicy: Sendable, Equatable {
    /// The known push services: Apple's (Safari, iOS home-screen web apps), Google's (Chrome, Edge on Android),
    /// Mozilla's (Firefox) and Microsoft's (Edge on Windows). All on port 443.
    public static let defaultHosts = ["*.push.apple.com", "fcm.googleapis.com", "updates.push.services.mozilla.com", "*.notify.windows.com"]

    /// One allowed host: an exact name or address, or `*.suffix` (any name ending in `.suffix`, not `suffix`
    /// itself), and a port.
    public struct Entry: Sendable, Hashable, CustomStringConvertible {
        /// The exact host (lowercased; an IPv6 literal without brackets), or the suffix after `*.`.
        public let host: String
        /// True for `*.suffix`.
        public let isWildcard: Bool
        /// The port (443 when the entry names none).
        public let port: Int
        /// True when the configuration added it (and, if exact, its addresses are the operator's to choose).
        public let isConfigured: Bool

        /// Parses `host[:port]` or `*.suffix[:port]`; the error names `field`.
        public init(parsing text: String, configured: Bool, field: String = "allowedHosts") throws(FieldError) {
            let wildcard = text.hasPrefix("*.")
            let rest = wildcard ? String(text.dropFirst(2)) : text
            // The endpoint parser judges the host and port exactly as it will judge an endpoint's.
            let endpoint: WebPushEndpoint
            do {
                endpoint = try WebPushEndpoint(parsing: "https://\(rest)/x", field: field)
            } catch {
                throw FieldError(field: field, message: "\(field): '\(text.prefix(80))' is not host[:port] or *.domain[:port]")
            }
            guard !wildcard || endpoint.address == nil, endpoint.authority == rest.lowercased() || rest.lowercased() == endpoint.authority + ":443"
            else { throw FieldError(field: field, message: "\(field): '\(text.prefix(80))' is not host[:port] or *.domain[:port]") }
            host = endpoint.host
            isWildcard = wildcard
            port = endpoint.port
            isConfigured = configured
        }

        /// True when `endpoint`'s host and port are this entry's.
        public func matches(_ endpoint: WebPushEndpoint) -> Bool {
            guard endpoint.port == port else { return false }
            if isWildcard { return endpoint.address == nil && endpoint.host.hasSuffix("." + host) }
            return endpoint.host == host
        }

        public var description: String {
            let name = isWildcard ? "*." + host : (host.contains(":") ? "[\(host)]" : host)
            return port == 443 ? name : "\(name):\(port)"
        }
    }

    /// The allowed hosts: the defaults, then the configured ones.
    public let entries: [Entry]

    /// The defaults plus `allowedHosts` from the configuration (each `host[:port]` or `*.domain[:port]`).
    public init(allowedHosts: [String] = []) throws(FieldError) {
        var entries: [Entry] = []
        for text in Self.defaultHosts { entries.append(try Entry(parsing: text, configured: false)) }
        for text in allowedHosts { entries.append(try Entry(parsing: text, configured: true)) }
        self.entries = entries
    }

    /// Accepts an endpoint at registration: its host and port must be allowed, and a literal address must not be
    /// refused (unless listed exactly). The error names `field` and the host.
    public func check(_ endpoint: WebPushEndpoint, field: String = "endpoint") throws(FieldError) {
        guard entries.contains(where: { $0.matches(endpoint) }) else {
            throw FieldError(
                field: field,
                message: "\(field) host '\(endpoint.authority)' is not an allowed push service "
                    + "(allowed: \(entries.map(\.description).joined(separator: ", ")); add it to apps.ID.webpush.allowedHosts)")
        }
        if let address = endpoint.address, let reason = refusal(address: address, for: endpoint) {
            throw FieldError(field: field, message: "\(field) host '\(endpoint.authority)' is \(reason)")
        }
    }

    /// Why the transport must not connect to `address` for `endpoint` (one of the addresses its host resolved to,
    /// or its literal), or nil when it may: ``IPAddress/refusal`` unless the endpoint's host and port are an
    /// exact configured entry. To be called for every resolved address before connecting.
    public func refusal(address: IPAddress, for endpoint: WebPushEndpoint) -> String? {
        if entries.contains(where: { $0.isConfigured && !$0.isWildcard && $0.matches(endpoint) }) { return nil }
        return address.refusal
    }
}
