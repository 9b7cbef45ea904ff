import Foundation

/// The names the IANA tz database defines, and the canonical zone each one stands for: every `Zone` and every `Link`
/// (the `backward` file's old names such as `Asia/Calcutta`, `Etc/*`, `UTC`). Parsed from the text of the system's
/// `tzdata.zi` (which PushStore reads at start-up: PushCore does no I/O), so a zone Apple's devices report and
/// Foundation's own list lacks (`Asia/Kolkata` on swift-corelibs-foundation) is still a zone.
public struct TimeZoneNames: Sendable, Equatable {
    /// The canonical zone names (`Z` lines).
    public let zones: Set<String>
    /// Each link's canonical zone (`L TARGET NAME` lines, chains followed).
    public let links: [String: String]

    public init(zones: Set<String>, links: [String: String]) {
        self.zones = zones
        var resolved: [String: String] = [:]
        for (name, target) in links {
            var at = target, hops = 0
            while let next = links[at], hops < 8 { at = next; hops += 1 }
            resolved[name] = at
        }
        self.links = resolved
    }

    /// Parses `tzdata.zi` (zic's compact input: `Z NAME …` for a zone, `L TARGET NAME` for a link; other lines are rules
    /// and comments).
    public init(tzdataZi text: some StringProtocol) {
        var zones: Set<String> = [], links: [String: String] = [:]
        // Read as bytes, and only `Z` and `L` lines are split into fields: the rule lines, most of the file, are passed
        // over by their first bytes. Splitting every line as a String cost ~180 million instructions (callgrind), 12 ms of
        // CPU at every start of pushctl, which reads this file whenever it loads a configuration (`pushctl jobs list`:
        // 26.5 ms before, 13.9 ms after, perf stat -r 10).
        var text = String(text)
        text.withUTF8 { bytes in
            let space = UInt8(ascii: " "), newline = UInt8(ascii: "\n")
            var start = 0
            while start < bytes.count {
                let end = bytes[start...].firstIndex(of: newline) ?? bytes.count
                var first = start
                while first < end, bytes[first] == space { first += 1 }
                if end - first > 2, bytes[first + 1] == space, bytes[first] == UInt8(ascii: "Z") || bytes[first] == UInt8(ascii: "L") {
                    let fields = bytes[first..<end].split(separator: space).map { String(decoding: $0, as: UTF8.self) }
                    if fields.count >= 2, fields[0] == "Z" {
                        zones.insert(fields[1])
                    } else if fields.count >= 3, fields[0] == "L" {
                        links[fields[2]] = fields[1]
                    }
                }
                start = end + 1
            }
        }
        self.init(zones: zones, links: links)
    }

    /// Foundation's list (no links known): what is left when the system has no `tzdata.zi`.
    public static func foundation() -> TimeZoneNames {
        TimeZoneNames(zones: Set(TimeZone.knownTimeZoneIdentifiers).union(["UTC"]), links: [:])
    }

    /// Every name: zones and links.
    public var allNames: Set<String> { zones.union(links.keys) }

    /// The canonical zone `name` stands for (itself for a zone, the target for a link), nil when it is not a name of
    /// the database. Exact spelling: `asia/kolkata` is not a name.
    public func canonical(_ name: String) -> String? {
        if zones.contains(name) { return name }
        return links[name]
    }
}
