import Testing
@Test func placeholderPushSender() { #expect(Bool(true)) }
