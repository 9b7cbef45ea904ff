/// Version order for `appVersion` and `osVersion` (`2.10 > 2.9`, `2.3 == 2.3.0`), as a sort key both databases
/// compare as plain text, so `appVersion >= 2.3` is one indexable comparison instead of a function per row.
///
/// A version is its leading run of dot-separated decimal numbers (`2.3.1`, `17.2`); whatever follows the first
/// character that is neither a digit nor a dot (`-beta`, ` (45)`) does not count, so `2.3-beta` orders as `2.3`.
/// A value that does not start with a digit has no key and matches no comparison.
///
/// The key writes each number as its digit count (1–9) followed by its digits, without leading zeros, joined by
/// dots, with trailing zero components removed: `2.10` → `12.210`, `2.9` → `12.19`, `2.3.0` → `12.13`. Comparing
/// keys byte by byte is comparing versions: a longer number has a larger count digit, numbers of the same length
/// compare digit by digit, and a version that is a prefix of another (`2.3` < `2.3.1`) has the shorter key.
public enum VersionOrder {
    /// The most components a version key keeps (`a.b.c.d.e.f`); further ones are ignored.
    public static let maximumComponents = 6

    /// The sort key of `version`, or nil when it does not start with a number (or a number has more than 9 digits).
    public static func key(_ version: String) -> String? {
        var components: [Substring] = []
        var current = Substring()
        var start: String.Index?
        let text = Substring(version)
        var index = text.startIndex
        func close(_ end: String.Index) {
            if let s = start { current = text[s..<end] } else { current = "" }
            components.append(current)
            start = nil
        }
        while index < text.endIndex {
            let c = text[index]
            if c.isASCII, c.isNumber {
                if start == nil { start = index }
            } else if c == "." {
                guard start != nil else { break }  // "2..3" or "2." ends the version
                close(index)
            } else {
                break
            }
            index = text.index(after: index)
        }
        if start != nil { close(index) }
        guard !components.isEmpty else { return nil }
        var numbers: [String] = []
        for component in components.prefix(maximumComponents) {
            let digits = component.drop { $0 == "0" }
            guard digits.count <= 9 else { return nil }
            numbers.append(digits.isEmpty ? "0" : String(digits))
        }
        while numbers.count > 1, numbers.last == "0" { numbers.removeLast() }
        return numbers.map { "\($0.count)\($0)" }.joined(separator: ".")
    }

    /// Compares two versions by their keys; nil when either has none.
    public static func compare(_ a: String, _ b: String) -> ComparisonResult? {
        guard let ka = key(a), let kb = key(b) else { return nil }
        return ka == kb ? .same : (ka.utf8.lexicographicallyPrecedes(kb.utf8) ? .ascending : .descending)
    }

    /// The order of two versions.
    public enum ComparisonResult: Sendable, Equatable {
        case ascending, same, descending
    }
}
