import Testing
@Test func placeholderAPNsSimulator() { #expect(Bool(true)) }
