/// The zones a device had before its current one, each with the instant it ended — what lets every wave of a
/// local-time job ask "which zone did this device have at the job's reference instant?" and get the same answer
/// however the zone changes while the waves run. A registration appends to it only when the zone changes (never
/// per job or per notification), and keeps what a job could still ask about: entries that ended within
/// ``keptMs`` of now, at most ``maximumEntries``.
///
/// Stored as a JSON array `[[zone, untilMs], …]` oldest first; `""` is "no zone". The stores read it in SQL (the
/// zone at R is the first entry whose until is after R, else the current zone); ``zone(at:current:)`` is the
/// same rule in Swift.
public struct TimeZoneHistory: Sendable, Equatable {
    /// How long an ended zone is remembered: longer than any local-time job's waves take (at most about 50 hours,
    /// from 09:00 at UTC+14 to 09:00 at UTC−12 on the next day) with room for waves that start late.
    public static let keptMs: Int64 = 14 * 24 * 3600 * 1000
    /// The most entries kept (a device changing zone more often within ``keptMs`` loses its oldest ones).
    public static let maximumEntries = 16

    /// Ended zones, oldest first.
    public var entries: [(zone: String, untilMs: Int64)]

    public init(entries: [(zone: String, untilMs: Int64)] = []) { self.entries = entries }

    public static func == (a: TimeZoneHistory, b: TimeZoneHistory) -> Bool {
        a.entries.count == b.entries.count && zip(a.entries, b.entries).allSatisfy { $0.zone == $1.zone && $0.untilMs == $1.untilMs }
    }

    /// Parses the stored column (nil or damaged text: empty).
    public init(stored text: String?) {
        self.init()
        guard let text, let json = try? JSONValue(parsing: text), let items = json.arrayValue else { return }
        for item in items {
            guard let pair = item.arrayValue, pair.count == 2, let zone = pair[0].stringValue, let until = pair[1].intValue else { continue }
            entries.append((zone, until))
        }
    }

    /// The stored column (nil when empty).
    public var storedText: String? {
        entries.isEmpty ? nil : JSONValue.array(entries.map { .array([.string($0.zone), .int($0.untilMs)]) }).encodedString
    }

    /// After the zone changed from `old` (nil: none) at `nowMs`: the old zone appended, what no job can ask about
    /// any more dropped.
    public func recording(old: String?, atMs nowMs: Int64) -> TimeZoneHistory {
        var kept = entries.filter { $0.untilMs >= nowMs - Self.keptMs }
        kept.append((old ?? "", nowMs))
        if kept.count > Self.maximumEntries { kept.removeFirst(kept.count - Self.maximumEntries) }
        return TimeZoneHistory(entries: kept)
    }

    /// The zone the device had at `instantMs` (nil: none), given its current zone.
    public func zone(at instantMs: Int64, current: String?) -> String? {
        if let entry = entries.first(where: { $0.untilMs > instantMs }) { return entry.zone.isEmpty ? nil : entry.zone }
        return current
    }
}
