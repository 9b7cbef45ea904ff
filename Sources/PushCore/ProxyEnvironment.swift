import Foundation

/// The proxy the environment names for a URL, by the rule libcurl applies to its environment variables — decided
/// here, so that the transport can hand libcurl the decision explicitly and know, per connection, whether it goes
/// to a proxy or straight to the host (and so whether the address it connects to is the host's and must pass the
/// address check). Left to libcurl, "is this proxied?" had to be guessed from the environment, and the guess was
/// wrong for `NO_PROXY`, an empty variable and `ALL_PROXY` (issue #55).
///
/// The rule (libcurl 7.88 and 8.x, `lib/url.c` and `lib/noproxy.c`):
/// - an https URL takes `https_proxy`, else `HTTPS_PROXY`; an http URL takes `http_proxy` only (never the
///   upper-case `HTTP_PROXY`, which a CGI request's `Proxy:` header can set); either falls back to `all_proxy`,
///   else `ALL_PROXY`;
/// - a variable that is set but empty counts as unset;
/// - `no_proxy`, else `NO_PROXY`, lists hosts that are reached directly: `*` alone means every host; otherwise
///   comma-separated entries (spaces around them ignored), a name matching itself and every name under it (a
///   leading dot is ignored: `example.com` and `.example.com` both match `a.example.com`), an IPv4 or IPv6 address
///   matching itself, an address with `/bits` its network; case-insensitive, a trailing dot ignored.
public struct ProxyEnvironment: Sendable, Equatable {
    /// A proxy the environment names: its URL as written (it may carry `user:password`: never print it) and the
    /// variable it came from, which is what messages name.
    public struct Proxy: Sendable, Equatable {
        public let url: String
        public let variable: String
    }

    private let variables: [String: String]

    /// The variables of the environment that matter here; others are ignored.
    public init(_ environment: [String: String]) {
        let names = ["https_proxy", "HTTPS_PROXY", "http_proxy", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY"]
        var kept: [String: String] = [:]
        for name in names { if let value = environment[name], !value.isEmpty { kept[name] = value } }
        variables = kept
    }

    /// The proxy for a URL with `scheme` (`https`, `http`) to `host` (a name, or an address without brackets), or
    /// nil to connect directly.
    public func proxy(scheme: String, host: String) -> Proxy? {
        let own = scheme.lowercased() == "http" ? ["http_proxy"] : ["\(scheme.lowercased())_proxy", "\(scheme.uppercased())_PROXY"]
        guard let variable = (own + ["all_proxy", "ALL_PROXY"]).first(where: { variables[$0] != nil }) else { return nil }
        if let list = variables["no_proxy"] ?? variables["NO_PROXY"], Self.matches(host: host, noProxy: list) { return nil }
        return Proxy(url: variables[variable]!, variable: variable)
    }

    /// Whether `noProxy` (a `NO_PROXY` value) names `host`.
    public static func matches(host: String, noProxy: String) -> Bool {
        let list = noProxy.trimmingCharacters(in: .whitespaces)
        if list == "*" { return true }
        var name = host.lowercased()
        if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        if name.hasSuffix(".") { name.removeLast() }
        let address = IPAddress(literal: name)
        for raw in list.split(separator: ",") {
            var entry = raw.trimmingCharacters(in: .whitespaces).lowercased()
            guard !entry.isEmpty else { continue }
            if let address {
                if entry.hasPrefix("["), let close = entry.firstIndex(of: "]") {
                    entry = String(entry[entry.index(after: entry.startIndex)..<close]) + entry[entry.index(after: close)...]
                }
                if Self.network(entry, contains: address) { return true }
                continue
            }
            if entry.hasPrefix(".") { entry.removeFirst() }
            if entry.hasSuffix(".") { entry.removeLast() }
            guard !entry.isEmpty else { continue }
            if name == entry || name.hasSuffix("." + entry) { return true }
        }
        return false
    }

    /// Whether `entry` (`address` or `address/bits`) contains `address` (same family only).
    private static func network(_ entry: String, contains address: IPAddress) -> Bool {
        let parts = entry.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let base = IPAddress(literal: parts[0]), base.bytes.count == address.bytes.count else { return false }
        let width = base.bytes.count * 8
        var bits = width
        if parts.count == 2 {
            guard let n = Int(parts[1]), (0...width).contains(n) else { return false }
            bits = n
        }
        for i in 0..<base.bytes.count {
            let take = min(8, max(0, bits - i * 8))
            let mask: UInt8 = take == 0 ? 0 : UInt8(truncatingIfNeeded: 0xFF << (8 - take))
            if base.bytes[i] & mask != address.bytes[i] & mask { return false }
        }
        return true
    }
}
