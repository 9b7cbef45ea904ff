/// Where UnifiedPush may send (server-side request forgery). Unlike Web Push, no allow-list of push services can
/// apply: every user picks their own distributor (an ntfy server, NextPush, a Gotify server…), so any public host is
/// allowed, and the defence is by address (SERV_1.2.0's advice): an endpoint whose host is, or resolves to, a
/// loopback, private, link-local or unique-local address (``IPAddress/refusal``) is refused — at registration (a
/// literal address here; the name's addresses when discovery connects) and at every connection the sender makes.
///
/// The operator may exempt what they run themselves (`apps.ID.unifiedpush.exemptHosts`): a host exactly
/// (`ntfy.internal`, any port; `ntfy.internal:8080`, that port) or a network in CIDR form (`10.1.0.0/16`: any address in
/// it, whatever name led there). Exempting is the operator's decision to send there, as listing a host exactly is
/// for Web Push (``WebPushHostPolicy``).
public struct UnifiedPushHostPolicy: Sendable, Equatable {
    /// One exempt host: a name or literal address, and its port when the entry names one.
    public struct Host: Sendable, Hashable, CustomStringConvertible {
        /// The host, lowercased (an IPv6 literal without brackets).
        public let host: String
        /// The port, or nil for any.
        public let port: Int?

        public var description: String {
            let name = host.contains(":") ? "[\(host)]" : host
            return port.map { "\(name):\($0)" } ?? name
        }
    }

    /// The hosts exempted exactly.
    public let hosts: [Host]
    /// The networks exempted.
    public let networks: [IPNetwork]

    /// Parses `exemptHosts`: each `host`, `host:port` or a CIDR network; the error names `field`.
    public init(exemptHosts: [String] = [], field: String = "exemptHosts") throws(FieldError) {
        var hosts: [Host] = []
        var networks: [IPNetwork] = []
        for text in exemptHosts {
            if text.contains("/") {
                guard let network = IPNetwork(parsing: text) else {
                    throw FieldError(field: field, message: "\(field): '\(text.prefix(80))' is not a network (address/length, e.g. 10.1.0.0/16)")
                }
                networks.append(network)
                continue
            }
            // The endpoint parser judges the host and port exactly as it will judge an endpoint's.
            guard let endpoint = try? WebPushEndpoint(parsing: "https://\(text)/x", field: field) else {
                throw FieldError(field: field, message: "\(field): '\(text.prefix(80))' is not host[:port] or a network")
            }
            let named = text.lowercased()
            let hasPort = named.hasPrefix("[") ? named.contains("]:") : named.contains(":")
            hosts.append(Host(host: endpoint.host, port: hasPort ? endpoint.port : nil))
        }
        self.hosts = hosts
        self.networks = networks
    }

    /// True when `endpoint`'s host (and port) is exempted exactly.
    public func exempts(_ endpoint: WebPushEndpoint) -> Bool {
        hosts.contains { $0.host == endpoint.host && ($0.port == nil || $0.port == endpoint.port) }
    }

    /// Accepts an endpoint at registration: a literal address must not be refused unless exempted. The error names
    /// `field` and the host. (A name's addresses are judged when discovery connects, and at every send.)
    public func check(_ endpoint: WebPushEndpoint, field: String = "endpoint") throws(FieldError) {
        if let address = endpoint.address, let reason = refusal(address: address, for: endpoint) {
            throw FieldError(
                field: field,
                message: "\(field) host '\(endpoint.authority)' is \(reason); a distributor on your own network must be listed in apps.ID.unifiedpush.exemptHosts")
        }
    }

    /// Why the transport must not connect to `address` for `endpoint`, or nil when it may: ``IPAddress/refusal``
    /// unless the endpoint's host is exempted exactly or the address is in an exempted network.
    public func refusal(address: IPAddress, for endpoint: WebPushEndpoint) -> String? {
        if exempts(endpoint) || networks.contains(where: { $0.contains(address) }) { return nil }
        return address.refusal
    }
}
