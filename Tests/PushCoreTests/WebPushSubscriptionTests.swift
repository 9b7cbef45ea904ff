import PushCore
import Testing

@Suite struct WebPushSubscriptionTests {
    static let p256dh = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
    static let auth = "BTBZMqHH6r4Tts7J_aSIgg"
    static let endpoint = "https://web.push.apple.com/QGuQyavXutnMH5ZhkPDpkeq0fbIAFWtm9OtxUg5Q"

    static func json(endpoint: String = endpoint, p256dh: String = p256dh, auth: String = auth, extra: String = "", keysExtra: String = "") -> String {
        #"{"endpoint":"\#(endpoint)","expirationTime":null,"keys":{"p256dh":"\#(p256dh)","auth":"\#(auth)"\#(keysExtra)}\#(extra)}"#
    }

    static func parse(_ text: String, allowed: [String] = []) throws(FieldError) -> WebPushSubscription {
        let policy: WebPushHostPolicy
        do { policy = try WebPushHostPolicy(allowedHosts: allowed) } catch { fatalError("\(error)") }
        return try WebPushSubscription(parsing: text, policy: policy)
    }

    static func refusal(_ text: String, allowed: [String] = []) -> FieldError? {
        do { _ = try parse(text, allowed: allowed); return nil } catch { return error }
    }

    @Test func aBrowsersToJSONIsAcceptedAndWrittenBackTheSame() throws {
        let subscription = try Self.parse(Self.json())
        #expect(subscription.endpoint.host == "web.push.apple.com")
        #expect(subscription.endpoint.origin == "https://web.push.apple.com")
        #expect(subscription.p256dh.count == 65 && subscription.p256dh[0] == 4)
        #expect(subscription.auth.count == 16)
        #expect(subscription.expirationTime == nil)
        #expect(subscription.json == (try JSONValue(parsing: Self.json())))
        // A padded key (some server libraries write it) decodes to the same bytes; the stored form is unpadded.
        let padded = try Self.parse(Self.json(auth: Self.auth + "=="))
        #expect(padded == subscription)
        #expect(padded.json["keys"]?["auth"] == .string(Self.auth))
        let expiring = try Self.parse(#"{"endpoint":"\#(Self.endpoint)","expirationTime":1800000000000,"keys":{"auth":"\#(Self.auth)","p256dh":"\#(Self.p256dh)"}}"#)
        #expect(expiring.expirationTime == 1_800_000_000_000)
    }

    @Test func unknownFieldsAreRefusedAtBothLevelsNamingTheField() {
        #expect(Self.refusal(Self.json(extra: #","service":"webpush""#))?.field == "service")
        #expect(Self.refusal(Self.json(keysExtra: #","aesgcm":"x""#))?.field == "keys.aesgcm")
        #expect(Self.refusal(#"{"endpoint":"\#(Self.endpoint)"}"#)?.field == "keys")
        #expect(Self.refusal(#"{"keys":{"p256dh":"\#(Self.p256dh)","auth":"\#(Self.auth)"}}"#)?.field == "endpoint")
        #expect(Self.refusal(#"{"endpoint":"\#(Self.endpoint)","keys":{"p256dh":"\#(Self.p256dh)"}}"#)?.field == "keys.auth")
        #expect(Self.refusal(#"{"endpoint":"\#(Self.endpoint)","expirationTime":"soon","keys":{}}"#)?.field == "expirationTime")
        #expect(Self.refusal("[]")?.field == "subscription")
        // Inside the API's body the fields are named from there.
        let policy = try? WebPushHostPolicy()
        let nested = #expect(throws: FieldError.self) {
            try WebPushSubscription(json: try JSONValue(parsing: Self.json(auth: "AAAA")), policy: #require(policy), prefix: "subscription.")
        }
        #expect(nested == FieldError(field: "subscription.keys.auth", message: "subscription.keys.auth must be 16 bytes, not 3"))
        let outside = #expect(throws: FieldError.self) {
            try WebPushSubscription(json: try JSONValue(parsing: Self.json(endpoint: "https://evil.example/x")), policy: #require(policy), prefix: "subscription.")
        }
        #expect(outside?.field == "subscription.endpoint" && outside?.message.hasPrefix("subscription.endpoint host 'evil.example'") == true)
        #expect(Self.refusal("{")?.field == "subscription")
    }

    @Test func keysMustHaveTheirRFC8291Form() {
        #expect(Self.refusal(Self.json(auth: "BTBZMqHH6r4Tts7J_aSI"))?.message == "keys.auth must be 16 bytes, not 15")
        #expect(Self.refusal(Self.json(auth: "BTBZMqHH6r4Tts7J/aSIgg"))?.field == "keys.auth")  // standard alphabet
        #expect(Self.refusal(Self.json(auth: Self.auth + "="))?.field == "keys.auth")  // wrong padding
        // Compressed point (33 bytes) and a 65-byte value not starting 0x04.
        #expect(Self.refusal(Self.json(p256dh: "AyVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcx"))?.field == "keys.p256dh")
        #expect(Self.refusal(Self.json(p256dh: "A" + Self.p256dh.dropFirst()))?.field == "keys.p256dh")
        #expect(Self.refusal(Self.json(p256dh: Self.p256dh + "x"))?.field == "keys.p256dh")  // 66 bytes
    }

    @Test func theEndpointMustBeHttpsToAnAllowedHost() {
        let cases: [(String, String)] = [
            ("http://web.push.apple.com/x", "https URL"),
            ("https://evil.example/x", "'evil.example' is not an allowed push service"),
            ("https://push.apple.com/x", "not an allowed"),  // a wildcard does not match its apex
            ("https://web.push.apple.com.evil.example/x", "not an allowed"),
            ("https://fcm.googleapis.com:8443/x", "not an allowed"),  // defaults are port 443 only
            ("https://user@fcm.googleapis.com/x", "user information"),
            ("https://fcm.googleapis.com", "path"),
            ("https://fcm.googleapis.com/x#frag", "fragment"),
            ("https://fcm.googleapis.com./x", "invalid host name"),
            ("https://fcm.googleapis.com/a b", "printable ASCII"),
            ("https://127.0.0.1/x", "not an allowed"),
            ("https://2130706433/x", "neither a DNS name"),
            ("https://127.1/x", "neither a DNS name"),
            ("https://[fe80::1%25eth0]/x", "invalid IPv6 literal"),
            ("https://1::2:443/x", "brackets"),
            ("https://::1/x", "invalid host name"),
        ]
        for (endpoint, words) in cases {
            let error = Self.refusal(Self.json(endpoint: endpoint))
            #expect(error?.field == "endpoint", "\(endpoint)")
            #expect(error?.message.contains(words) == true, "\(endpoint): \(error?.message ?? "accepted")")
        }
        for endpoint in ["https://fcm.googleapis.com/fcm/send/abc:APA91", "HTTPS://updates.push.services.mozilla.com/wpush/v2/gAAA",
                         "https://db5p.notify.windows.com/w/?token=BQYAAA", "https://fcm.googleapis.com:443/x"] {
            #expect(Self.refusal(Self.json(endpoint: endpoint)) == nil, "\(endpoint)")
        }
    }

    @Test func configuredHostsAreAddedAndExactOnesMayBeLocal() throws {
        // Wildcards and defaults never reach a local literal; an exact configured host:port is the operator's choice.
        #expect(Self.refusal(Self.json(endpoint: "https://127.0.0.1:4443/s/1"), allowed: ["127.0.0.1:4443"]) == nil)
        #expect(Self.refusal(Self.json(endpoint: "https://[::1]:4443/s/1"), allowed: ["[::1]:4443"]) == nil)
        #expect(Self.refusal(Self.json(endpoint: "https://127.0.0.1:4444/s/1"), allowed: ["127.0.0.1:4443"])?.message.contains("not an allowed") == true)
        #expect(Self.refusal(Self.json(endpoint: "https://push.example.org/s/1"), allowed: ["push.example.org"]) == nil)
        #expect(Self.refusal(Self.json(endpoint: "https://a.push.example.org:8443/s"), allowed: ["*.push.example.org:8443"]) == nil)
        for bad in ["https://x", "*.10.0.0.1", "host/path", "host:0", "", "*.", "[::1"] {
            #expect(throws: FieldError.self, "\(bad)") { try WebPushHostPolicy(allowedHosts: [bad]) }
        }
        // The resolution check: what the transport calls for each address an allowed name resolves to.
        let policy = try WebPushHostPolicy(allowedHosts: ["push.internal:8443", "*.example.org"])
        let apple = try WebPushEndpoint(parsing: "https://web.push.apple.com/x")
        let loopback = try #require(IPAddress(literal: "127.0.0.1"))
        let mapped = try #require(IPAddress(literal: "::ffff:10.1.2.3"))
        let publicV4 = try #require(IPAddress(literal: "17.253.144.10"))
        #expect(policy.refusal(address: loopback, for: apple) == "a loopback address")
        #expect(policy.refusal(address: mapped, for: apple)?.hasPrefix("a private address") == true)
        #expect(policy.refusal(address: publicV4, for: apple) == nil)
        #expect(policy.refusal(address: loopback, for: try WebPushEndpoint(parsing: "https://push.internal:8443/x")) == nil)
        #expect(policy.refusal(address: loopback, for: try WebPushEndpoint(parsing: "https://a.example.org/x")) == "a loopback address")
    }
}
