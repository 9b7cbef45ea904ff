import Foundation
import PushCore

/// How one connection leaves the process: straight to the host, through the configured proxy, or through the
/// proxy the environment names. Decided by us for every easy handle and given to libcurl explicitly
/// (`CURLOPT_PROXY`, with an empty `CURLOPT_NOPROXY`), so libcurl never consults the environment itself and the
/// transport knows which connections go to the host: only those are the host's address, and only those are judged
/// by an ``AddressCheck`` (a Web Push endpoint a client chose). Through a proxy, libcurl's one connection is to the
/// proxy the operator chose; the proxy resolves and reaches the host, under the operator's egress rules.
public enum ProxyRoute: Sendable, Equatable, CustomStringConvertible {
    /// No proxy, whatever the environment says: libcurl connects to the host's resolved addresses.
    case direct
    /// The configuration's proxy (`proxy`, `apps.ID.proxy`): it carries every host, whatever `NO_PROXY` says.
    case configured(SenderProxy)
    /// A proxy from the environment (``ProxyEnvironment``): its URL, which may carry credentials and is never
    /// printed, and the variable it came from.
    case environment(ProxyEnvironment.Proxy)

    /// The route to `host` for a URL with `scheme`: the configured proxy if there is one, else the environment's
    /// rule.
    public init(scheme: String = "https", host: String, configured: SenderProxy?, environment: ProxyEnvironment) {
        if let configured {
            self = .configured(configured)
        } else if let proxy = environment.proxy(scheme: scheme, host: host) {
            self = .environment(proxy)
        } else {
            self = .direct
        }
    }

    /// The route for `url` (its scheme and host); direct when `url` does not parse (the request then fails on
    /// its own, naming the URL).
    public init(url: String, configured: SenderProxy?, environment: ProxyEnvironment) {
        let parts = URLComponents(string: url)
        self.init(
            scheme: parts?.scheme ?? "https", host: parts?.host ?? "", configured: configured, environment: environment)
    }

    /// True when libcurl's connection goes to the host itself.
    public var isDirect: Bool { self == .direct }

    /// Names the proxy for messages, never its credentials: the configured URL (which cannot carry them) or the
    /// environment variable.
    public var description: String {
        switch self {
        case .direct: "no proxy"
        case .configured(let proxy): proxy.url
        case .environment(let proxy): "the proxy in \(proxy.variable)"
        }
    }
}
