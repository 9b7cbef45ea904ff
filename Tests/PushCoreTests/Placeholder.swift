import Testing
@Test func placeholderPushCore() { #expect(Bool(true)) }
