import Testing
@Test func placeholderPushStore() { #expect(Bool(true)) }
