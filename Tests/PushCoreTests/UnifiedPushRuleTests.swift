import PushCore
import Testing

/// UnifiedPush's pure rules: the answer rule (SERV_1.2.0), the address rule with its exemptions, the endpoint's form
/// (http or https, at most 1000 bytes) and the payload mapping that, unlike Web Push's, sends silent pushes.
@Suite struct UnifiedPushRuleTests {
    @Test func theAnswerRuleAcceptsAny2xxPrunesGoneEndpointsAndRetries429AndTheRest() {
        for status in [200, 201, 202, 204] { #expect(UnifiedPushAnswerRule.verdict(status: status).kind == .accepted) }
        for status in [404, 410] { #expect(UnifiedPushAnswerRule.verdict(status: status).kind == .tokenDead) }
        // 3xx is final: a redirect is never followed. 401/403 are final for the message, not a stop of the host.
        for status in [301, 307, 400, 401, 403, 413] { #expect(UnifiedPushAnswerRule.verdict(status: status).kind == .permanent) }
        let slow = UnifiedPushAnswerRule.verdict(status: 429, retryAfterMs: 2_000)
        #expect(slow.kind == .retryable && slow.retryAfterMs == 2_000)
        for status in [405, 500, 502, 503] { #expect(UnifiedPushAnswerRule.verdict(status: status).kind == .retryable) }
    }

    @Test func privateAddressesAreRefusedUnlessTheirHostOrNetworkIsExempt() throws {
        let policy = try UnifiedPushHostPolicy(exemptHosts: ["ntfy.internal", "push.lan:8443", "10.1.0.0/16"])
        let ntfy = try WebPushEndpoint(parsing: "http://ntfy.internal:8080/up/x", allowingHTTP: true)
        let lan = try WebPushEndpoint(parsing: "https://push.lan/up/x")
        let lanPort = try WebPushEndpoint(parsing: "https://push.lan:8443/up/x")
        let other = try WebPushEndpoint(parsing: "https://ntfy.sh/up/x")
        let loopback = IPAddress(literal: "127.0.0.1")!, inNetwork = IPAddress(literal: "10.1.7.9")!
        let outside = IPAddress(literal: "10.2.0.1")!, public4 = IPAddress(literal: "93.184.216.34")!
        #expect(policy.refusal(address: loopback, for: ntfy) == nil)  // the host exactly, any port
        #expect(policy.refusal(address: loopback, for: lan) != nil)  // the entry names port 8443
        #expect(policy.refusal(address: loopback, for: lanPort) == nil)
        #expect(policy.refusal(address: inNetwork, for: other) == nil)  // any name, an address in 10.1.0.0/16
        #expect(policy.refusal(address: outside, for: other) == "a private address")
        #expect(policy.refusal(address: loopback, for: other) == "a loopback address")
        #expect(policy.refusal(address: public4, for: other) == nil)
        #expect(throws: FieldError.self) { try policy.check(WebPushEndpoint(parsing: "https://10.2.0.1/up/x")) }
        try policy.check(WebPushEndpoint(parsing: "https://10.1.0.1/up/x"))
        #expect(throws: FieldError.self) { try UnifiedPushHostPolicy(exemptHosts: ["10.1.0.1/16"]) }  // bits past the prefix
        #expect(throws: FieldError.self) { try UnifiedPushHostPolicy(exemptHosts: ["ntfy internal"]) }
        #expect(IPNetwork(parsing: "fd00::/8")?.contains(IPAddress(literal: "fd12::1")!) == true)
        #expect(IPNetwork(parsing: "fd00::/8")?.contains(IPAddress(literal: "10.0.0.1")!) == false)
    }

    @Test func anEndpointIsHTTPOrHTTPSAtMost1000BytesWithItsOwnOrigin() throws {
        let policy = try UnifiedPushHostPolicy()
        func subscription(_ endpoint: String) throws -> WebPushSubscription {
            let json = JSONValue.object([
                ("endpoint", .string(endpoint)),
                ("keys", .object([("p256dh", .string(Base64URL.encode([4] + [UInt8](repeating: 1, count: 64)))),
                                  ("auth", .string(Base64URL.encode([UInt8](repeating: 2, count: 16))))])),
            ])
            return try WebPushSubscription(json: json, unifiedPush: policy)
        }
        let plain = try subscription("HTTP://Push.Example.NET:80/up/abc")
        #expect(plain.endpoint.url == "http://push.example.net/up/abc" && plain.endpoint.origin == "http://push.example.net")
        #expect(!plain.endpoint.isSecure && plain.endpoint.port == 80)
        #expect(try subscription("https://push.example.net/up/abc").endpoint.isSecure)
        let longest = "https://push.example.net/" + String(repeating: "a", count: 1000 - 25)
        #expect(try subscription(longest).endpoint.url.utf8.count == 1000)
        #expect(throws: FieldError.self) { try subscription(longest + "a") }
        #expect(throws: FieldError.self) { try subscription("ftp://push.example.net/up/abc") }
        // Web Push stays https only.
        #expect(throws: FieldError.self) { try WebPushEndpoint(parsing: "http://push.example.net/x") }
    }

    @Test func aSilentPushIsSentAsADataMessageWhereWebPushSkipsIt() throws {
        let payload = Array(#"{"aps":{"content-available":1},"order":"42"}"#.utf8)
        #expect(WebPushPayload.map(apnsPayload: payload, pushType: .background, id: "n1", collapseId: nil, declarative: false)
            == .skip(WebPushPayload.silentReason))
        guard case .send(let bytes) = WebPushPayload.map(
            apnsPayload: payload, pushType: .background, id: "n1", collapseId: nil, declarative: false, unifiedPush: true)
        else { Issue.record("a UnifiedPush silent push was skipped"); return }
        let message = try JSONValue(parsing: bytes)
        #expect(message["id"] == .string("n1") && message["title"] == nil && message["data"]?["order"] == .string("42"))
        #expect(WebPushPayload.map(apnsPayload: payload, pushType: .voip, id: "n1", collapseId: nil, declarative: false, unifiedPush: true)
            != .send(bytes))
    }
}
