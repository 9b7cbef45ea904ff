import PushCore
import Testing

@testable import PushServer

@Suite struct MetricLabelsTests {
    @Test func reasonsAreApplesOrOneOfTwoClasses() {
        #expect(MetricLabels.reason(status: 200, reason: nil) == "")
        #expect(MetricLabels.reason(status: 410, reason: "Unregistered") == "Unregistered")
        #expect(MetricLabels.reason(status: 429, reason: "TooManyRequests") == "TooManyRequests")
        // No answer: the stored text is the transport's error message.
        #expect(MetricLabels.reason(status: 0, reason: "TLS with https://h:443 failed: error:0A000086") == "transportError")
        // An answer with a reason Apple added after this version.
        #expect(MetricLabels.reason(status: 400, reason: "SomethingNew") == "unknown")
        // UnifiedPush: a distributor the address rule refused at connect (no answer, but no transport error either),
        // and a distributor's 404 (the spec's "gone").
        #expect(MetricLabels.reason(status: 0, reason: "AddressRefused") == "AddressRefused")
        #expect(MetricLabels.reason(status: 404, reason: "Gone") == "Gone")
    }

    @Test func labelValuesAreEscapedAsTheExpositionFormatRequires() {
        #expect(MetricLabels.escape("example") == "example")
        #expect(MetricLabels.escape(#"a"b"#) == #"a\"b"#)
        #expect(MetricLabels.escape(#"a\b"#) == #"a\\b"#)
        #expect(MetricLabels.escape("a\nb") == #"a\nb"#)
    }
}
