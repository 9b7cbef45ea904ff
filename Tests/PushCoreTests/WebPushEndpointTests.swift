import PushCore
import Testing

/// One endpoint has one form, so one subscription is one device: the spellings a browser, a proxy or a hand-written
/// client may use of the same URL all parse to the same ``WebPushEndpoint/url``, and dot segments, which a server
/// would resolve to another path than the one registered, are refused.
@Suite struct WebPushEndpointTests {
    @Test func theSpellingsOfOneEndpointHaveOneCanonicalForm() throws {
        let spellings = [
            "https://web.push.apple.com/QGmZ?x=1", "https://web.push.apple.com:443/QGmZ?x=1", "HTTPS://WEB.Push.Apple.com/QGmZ?x=1",
            "https://web.push.apple.com:0443/QGmZ?x=1", "Https://web.push.apple.com:00443/QGmZ?x=1",
        ]
        for text in spellings {
            let endpoint = try WebPushEndpoint(parsing: text)
            #expect(endpoint.url == "https://web.push.apple.com/QGmZ?x=1", "\(text)")
            #expect(endpoint.origin == "https://web.push.apple.com")
        }
        // The path is kept as the push service wrote it: its case matters (a subscription id).
        #expect(try WebPushEndpoint(parsing: "https://Push.Example.net:8443/AbC/d").url == "https://push.example.net:8443/AbC/d")
        #expect(try WebPushEndpoint(parsing: "https://[2001:DB8:0::1]:443/x").url == "https://[2001:db8::1]/x")
        #expect(try WebPushEndpoint(parsing: "https://[2001:db8::1]:8443/x").url == "https://[2001:db8::1]:8443/x")
        #expect(try WebPushEndpoint(parsing: "https://127.0.0.1:4443/wp/1").url == "https://127.0.0.1:4443/wp/1")
    }

    @Test func dotSegmentsAreRefusedInEveryEncoding() {
        for text in ["https://fcm.googleapis.com/a/../b", "https://fcm.googleapis.com/./x", "https://fcm.googleapis.com/a/.",
                     "https://fcm.googleapis.com/..", "https://fcm.googleapis.com/a/%2e%2E/b", "https://fcm.googleapis.com/a/.%2e/b",
                     "https://fcm.googleapis.com/%2E/x", "https://fcm.googleapis.com/a/..?q=1"] {
            let error = #expect(throws: FieldError.self, "\(text)") { try WebPushEndpoint(parsing: text) }
            #expect(error?.message.contains("dot segment") == true, "\(text): \(error?.message ?? "accepted")")
        }
        // Dots inside a segment, and in the query, are ordinary characters.
        for text in ["https://fcm.googleapis.com/a/b.", "https://fcm.googleapis.com/...", "https://fcm.googleapis.com/.well/x",
                     "https://fcm.googleapis.com/x?path=../y"] {
            #expect((try? WebPushEndpoint(parsing: text)) != nil, "\(text)")
        }
    }
}
