/// A TCP address a listener binds: the public API's (`server.host`, `server.port`) or the admin listener's
/// (`server.admin`).
public struct ListenAddress: Sendable, Equatable, CustomStringConvertible {
    /// Interface to bind (a name or an address).
    public var host: String
    /// TCP port; 0 picks a free one.
    public var port: Int

    /// Creates an address.
    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// `host:port` (an IPv6 address in brackets).
    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
