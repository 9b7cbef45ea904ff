import PushCore
import Testing

/// The proxy the environment names for a URL, by libcurl's rule for its variables (``ProxyEnvironment``): which
/// variable a scheme reads, the fallback to `ALL_PROXY`, an empty variable as unset, and `NO_PROXY` matching.
/// The transport hands this decision to libcurl, and judges the address of every connection it makes directly.
@Suite struct ProxyEnvironmentTests {
    func proxy(_ environment: [String: String], _ host: String = "updates.push.services.mozilla.com", scheme: String = "https")
        -> String?
    {
        ProxyEnvironment(environment).proxy(scheme: scheme, host: host)?.variable
    }

    @Test func anHttpsURLTakesHttpsProxyThenAllProxyAndAnEmptyVariableCountsAsUnset() {
        #expect(proxy([:]) == nil)
        #expect(proxy(["HTTPS_PROXY": "http://p:3128"]) == "HTTPS_PROXY")
        #expect(proxy(["https_proxy": "http://p:1", "HTTPS_PROXY": "http://p:2"]) == "https_proxy")
        #expect(proxy(["https_proxy": "", "HTTPS_PROXY": "http://p:2"]) == "HTTPS_PROXY")
        #expect(proxy(["HTTPS_PROXY": ""]) == nil)
        #expect(proxy(["ALL_PROXY": "http://p:3"]) == "ALL_PROXY")
        #expect(proxy(["all_proxy": "socks5h://p:1080", "ALL_PROXY": "http://p:3"]) == "all_proxy")
        #expect(proxy(["HTTPS_PROXY": "", "ALL_PROXY": "http://p:3"]) == "ALL_PROXY")
        #expect(ProxyEnvironment(["HTTPS_PROXY": "http://u:secret@p:3128"]).proxy(scheme: "https", host: "x")?.url == "http://u:secret@p:3128")
    }

    @Test func anHttpURLTakesOnlyTheLowerCaseHttpProxy() {
        #expect(proxy(["http_proxy": "http://p:1"], scheme: "http") == "http_proxy")
        // Upper-case HTTP_PROXY is never read (a CGI request's Proxy: header can set it); ALL_PROXY still applies.
        #expect(proxy(["HTTP_PROXY": "http://p:1"], scheme: "http") == nil)
        #expect(proxy(["HTTP_PROXY": "http://p:1", "ALL_PROXY": "http://p:3"], scheme: "http") == "ALL_PROXY")
        #expect(proxy(["HTTPS_PROXY": "http://p:1"], scheme: "http") == nil)
        #expect(proxy(["http_proxy": "http://p:1"], scheme: "https") == nil)
    }

    @Test func noProxyNamesHostsDomainsAddressesAndNetworks() {
        let host = "updates.push.services.mozilla.com"
        for list in [host, "*", " * ", "mozilla.com", ".mozilla.com", "example.org, services.mozilla.com", "UPDATES.push.services.mozilla.com.",
                     "a.b,,updates.push.services.mozilla.com"] {
            #expect(ProxyEnvironment.matches(host: host, noProxy: list), "\(list)")
            #expect(proxy(["HTTPS_PROXY": "http://p:1", "NO_PROXY": list], host) == nil, "\(list)")
            #expect(proxy(["ALL_PROXY": "http://p:1", "no_proxy": list], host) == nil, "\(list)")
        }
        for list in ["zilla.com", "push.services.mozilla.com.evil", "updates.push.services.mozilla.co", "*.mozilla.com", "127.0.0.1", ""] {
            #expect(!ProxyEnvironment.matches(host: host, noProxy: list), "\(list)")
        }
        #expect(ProxyEnvironment.matches(host: "10.1.2.3", noProxy: "10.0.0.0/8"))
        #expect(ProxyEnvironment.matches(host: "10.1.2.3", noProxy: "example.com,10.1.2.3"))
        #expect(!ProxyEnvironment.matches(host: "11.1.2.3", noProxy: "10.0.0.0/8"))
        #expect(!ProxyEnvironment.matches(host: "10.1.2.3", noProxy: "10.1.2.4"))
        #expect(ProxyEnvironment.matches(host: "2001:db8::5", noProxy: "[2001:db8::]/32"))
        #expect(ProxyEnvironment.matches(host: "[2001:db8::5]", noProxy: "2001:db8::5"))
        #expect(!ProxyEnvironment.matches(host: "2001:db9::5", noProxy: "2001:db8::/32"))
        // no_proxy wins over NO_PROXY, as libcurl reads it first.
        #expect(proxy(["HTTPS_PROXY": "http://p:1", "no_proxy": "example.org", "NO_PROXY": host], host) == "HTTPS_PROXY")
    }
}
