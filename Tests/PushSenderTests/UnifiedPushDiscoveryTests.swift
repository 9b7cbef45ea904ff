import PushCore
import PushSender
import Testing

/// The rule discovery applies to an answer (the network part is tested through the server:
/// UnifiedPushRegistrationTests).
@Suite struct UnifiedPushDiscoveryTests {
    @Test func onlyA200WithUnifiedPushVersion1IsADistributor() {
        #expect(UnifiedPushDiscovery.judge(status: 200, body: Array(#"{"unifiedpush":{"version":1}}"#.utf8)) == .unifiedPush)
        #expect(UnifiedPushDiscovery.judge(status: 200, body: Array(#"{"unifiedpush":{"version":1},"x":2}"#.utf8)) == .unifiedPush)
        for (status, body) in [(200, #"{"unifiedpush":{"version":2}}"#), (200, "{}"), (200, "<html>"), (301, ""), (404, ""),
                               (500, #"{"unifiedpush":{"version":1}}"#)] {
            guard case .refused = UnifiedPushDiscovery.judge(status: status, body: Array(body.utf8)) else {
                Issue.record("\(status) \(body) was taken for a distributor")
                continue
            }
        }
        let padded = Array(#"{"unifiedpush":{"version":1}}"#.utf8) + [UInt8](repeating: 0x20, count: UnifiedPushDiscovery.maximumBody)
        #expect(UnifiedPushDiscovery.judge(status: 200, body: padded) != .unifiedPush)
    }
}
