/// An outbound HTTP proxy for the connections to APNs (`proxy`, `apps.ID.proxy`). HTTPS to APNs always goes
/// through it as a `CONNECT` tunnel, so TLS (and its verification) stays end to end with APNs.
///
/// Credentials are never part of the URL: they come from a file or an environment variable (``credentials``),
/// as `user:password`.
public struct ProxySettings: Sendable, Equatable, CustomStringConvertible {
    /// The proxy's host name or address (IPv6 without brackets).
    public var host: String
    /// The proxy's TCP port.
    public var port: Int
    /// Where `user:password` for the proxy comes from, or nil when it needs none.
    public var credentials: PasswordSource?

    /// Creates proxy settings.
    public init(host: String, port: Int, credentials: PasswordSource? = nil) {
        self.host = host
        self.port = port
        self.credentials = credentials
    }

    /// Parses `http://host:port` (an IPv6 address in brackets). A URL carrying credentials (`http://u:p@host`)
    /// is refused, as inline passwords are everywhere else; so are other schemes, paths and a missing port.
    public init(parsing text: String, credentials: PasswordSource? = nil) throws(ConfigurationError) {
        // Before anything that quotes the text: it must not end up in an error message with a password in it.
        if text.contains("@") {
            throw ConfigurationError("proxy: put no credentials in the URL; use proxyCredentialsFile or proxyCredentialsEnv")
        }
        guard text.hasPrefix("http://") else {
            throw ConfigurationError("proxy must be an http://host:port URL (HTTPS to APNs is tunnelled through it with CONNECT), not '\(text)'")
        }
        var rest = Substring(text.dropFirst("http://".count))
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        guard !rest.isEmpty, !rest.contains("/"), !rest.contains("?"), !rest.contains("#") else {
            throw ConfigurationError("proxy must be http://host:port without a path: '\(text)'")
        }
        guard let colon = rest.lastIndex(of: ":"), !rest.hasSuffix("]"),
            let port = Int(rest[rest.index(after: colon)...]), (1...65535).contains(port)
        else {
            throw ConfigurationError("proxy must name its port (http://host:port): '\(text)'")
        }
        var host = rest[..<colon]
        if host.hasPrefix("[") && host.hasSuffix("]") { host = host.dropFirst().dropLast() }
        guard !host.isEmpty, !host.contains("["), !host.contains("]") else {
            throw ConfigurationError("proxy has a bad host: '\(text)'")
        }
        self.init(host: String(host), port: port, credentials: credentials)
    }

    /// `http://host:port`, as libcurl takes it (never with credentials).
    public var url: String {
        let h = host.contains(":") ? "[\(host)]" : host
        return "http://\(h):\(port)"
    }

    /// ``url``.
    public var description: String { url }
}
