import PushCore
import Testing

/// `VersionOrder`: `appVersion >= 2.3` compares versions, not text, through a key both databases order as text.
@Suite struct VersionOrderTests {
    @Test(arguments: [
        ("2.10", "2.9", VersionOrder.ComparisonResult.descending),
        ("2.3", "2.3.0", .same),
        ("2.3", "2.3.1", .ascending),
        ("10", "9.99", .descending),
        ("1.0.0", "1", .same),
        ("02.010", "2.10", .same),
        ("2.3-beta", "2.3", .same),
        ("17.2 (21C62)", "17.2", .same),
        ("0", "0.0.0", .same),
        ("999999999", "1000000", .descending),
        ("1.2.3.4.5.6.7", "1.2.3.4.5.6", .same),  // components past the sixth do not count
    ]) func ordersVersions(_ a: String, _ b: String, _ order: VersionOrder.ComparisonResult) {
        #expect(VersionOrder.compare(a, b) == order)
        // The key orders the same way as bytes: what the databases compare.
        let (ka, kb) = (VersionOrder.key(a)!, VersionOrder.key(b)!)
        let bytes: VersionOrder.ComparisonResult = ka == kb ? .same : (ka.utf8.lexicographicallyPrecedes(kb.utf8) ? .ascending : .descending)
        #expect(bytes == order)
    }

    @Test func somethingThatIsNotAVersionHasNoKey() {
        #expect(VersionOrder.key("beta") == nil)
        #expect(VersionOrder.key("") == nil)
        #expect(VersionOrder.key(".5") == nil)
        #expect(VersionOrder.key("1234567890.1") == nil)
        #expect(VersionOrder.compare("beta", "1") == nil)
        #expect(VersionOrder.key("2.10") == "12.210")
    }
}
