import PushCore
import Testing

@testable import PushSimulator

/// The simulator judges FCM registration tokens on its own (`FCMMessageService.isWellFormed`), as an independent
/// referee; registration judges them with `FCMRegistrationToken`. Both must accept and refuse the same tokens, or a
/// registered device would be refused at send time (or a bad one accepted).
@Suite struct FCMTokenRuleAgreementTests {
    @Test func theSimulatorAndRegistrationAgreeOnBoundsAndAlphabet() {
        #expect(FCMMessageService.minimumTokenLength == FCMRegistrationToken.minimumLength)
        #expect(FCMMessageService.maximumTokenLength == FCMRegistrationToken.maximumLength)
        var samples = [31, 32, 33, 163, 4095, 4096, 4097].map { String(repeating: "a", count: $0) }
        samples += (0...127).map { String(repeating: "b", count: 40) + String(UnicodeScalar(UInt8($0))) }
        samples += ["é" + String(repeating: "c", count: 40), (0..<5).map { _ in PushSimulator.mintFCMToken() }.joined(separator: ":")]
        samples += (0..<20).map { _ in PushSimulator.mintFCMToken() }
        for token in samples {
            let registered = (try? FCMRegistrationToken(parsing: token)) != nil
            #expect(registered == FCMMessageService.isWellFormed(token: token), "\(token.prefix(60)) (\(token.utf8.count) bytes)")
        }
    }
}
