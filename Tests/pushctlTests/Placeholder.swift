import Testing
@Test func placeholderpushctl() { #expect(Bool(true)) }
