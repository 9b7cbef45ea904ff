import Foundation

/// `--local-time HH:MM [--on YYYY-MM-DD] [--skip-past]`, the API's `"localTime": {"time", "date"?, "skipPast"?}`.
public struct LocalTimeSpec: Sendable, Equatable {
    public var hour: Int
    public var minute: Int
    /// The local date, or nil for "the next occurrence after the job is created" in each zone.
    public var date: CivilDate?
    /// Drop waves whose time has passed when the job is created (else they are sent at once).
    public var skipPast: Bool

    public init(hour: Int, minute: Int, date: CivilDate? = nil, skipPast: Bool = false) {
        self.hour = hour
        self.minute = minute
        self.date = date
        self.skipPast = skipPast
    }

    /// Parses `HH:MM` (00:00–23:59) and an optional `YYYY-MM-DD`.
    public static func parse(time: String, date: String?, skipPast: Bool = false) throws(FieldError) -> LocalTimeSpec {
        let parts = time.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count == 2, parts[1].count == 2, let h = Int(parts[0]), let m = Int(parts[1]),
              (0...23).contains(h), (0...59).contains(m)
        else { throw FieldError(field: "localTime", message: "local time must be HH:MM (00:00-23:59), not '\(time.prefix(20))'") }
        var spec = LocalTimeSpec(hour: h, minute: m, skipPast: skipPast)
        if let date { spec.date = try parseDate(date) }
        return spec
    }

    /// `YYYY-MM-DD`, a real date (2026-02-30 is refused) of the years 1970–9999.
    static func parseDate(_ text: String) throws(FieldError) -> CivilDate {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              let y = Int(parts[0]), let m = Int(parts[1]), let d = Int(parts[2]), (1970...9999).contains(y),
              CivilDate(year: y, month: m, day: d).isValid
        else { throw FieldError(field: "localTime", message: "the date must be YYYY-MM-DD, a real date, not '\(text.prefix(20))'") }
        return CivilDate(year: y, month: m, day: d)
    }

    /// `09:00` or `09:00 on 2026-12-24`.
    public var description: String {
        let time = (hour < 10 ? "0" : "") + "\(hour):" + (minute < 10 ? "0" : "") + "\(minute)"
        return date.map { "\(time) on \($0.description)" } ?? time
    }
}

/// The waves of a local-time job: every IANA zone's instant for the wall-clock time, zones grouped by instant and UTC
/// offset (one wave per offset), in time order. Pure: the zones and the creation instant (the store's clock) go
/// in, the waves come out, so the same job always plans the same waves.
///
/// - With a date, a zone's instant is that date at that time there; without one, the first such instant after the
///   job is created (today there if still ahead, else tomorrow).
/// - A time that a daylight-saving change skips (02:30 when clocks jump from 02:00 to 03:00) is the first valid minute
///   after it (03:00); a time that happens twice (01:30 when clocks fall back) is its first occurrence.
/// - A wave whose instant is before the job's creation (only possible with a date) is sent at once, or dropped with
///   `skipPast`.
/// - Devices without a zone belong to the wave of the app's `defaultTimeZone`.
public enum LocalTimePlan {
    /// One wave: when it starts and whose devices it takes.
    public struct Wave: Sendable, Equatable {
        /// When it is due (ms since 1970): its zones' instant, or the job's creation when that instant had passed.
        public var atMs: Int64
        /// The instant the local time falls on in its zones (ms since 1970).
        public var localInstantMs: Int64
        /// Its zones' UTC offset at that instant, in seconds.
        public var utcOffsetSeconds: Int
        /// Its zones, sorted.
        public var zones: [String]
        /// True when devices without a zone belong to it.
        public var includesUnzoned: Bool
        /// True when its instant had passed at creation (sent at once).
        public var past: Bool

        /// `UTC+09:00`, `UTC-05:30`.
        public var offsetLabel: String { Self.label(offsetSeconds: utcOffsetSeconds) }

        /// `UTC+09:00` for an offset in seconds.
        public static func label(offsetSeconds s: Int) -> String {
            let sign = s < 0 ? "-" : "+"
            let h = abs(s) / 3600, m = abs(s) % 3600 / 60
            return "UTC\(sign)\(h < 10 ? "0" : "")\(h):\(m < 10 ? "0" : "")\(m)"
        }
    }

    /// The waves for `spec` created at `createdMs`, over `zones` (every name of the tz database, links included, so a
    /// device that stored an old name before names were made canonical still has its wave), devices without a zone in
    /// `defaultZone`'s wave.
    public static func waves(_ spec: LocalTimeSpec, createdMs: Int64, defaultZone: String, zones: [String]) -> [Wave] {
        // Keyed by instant and offset: without a date, 09:00 at UTC+14 and at UTC-10 can fall on the same instant (on
        // different local dates); they stay two waves, each labelled with its own offset.
        struct Key: Hashable { var instant: Int64; var offset: Int }
        var groups: [Key: [String]] = [:]
        var all = zones
        if !all.contains(defaultZone) { all.append(defaultZone) }
        for name in all {
            guard let zone = TimeZone(identifier: name) else { continue }
            let at = instantMs(spec, in: zone, createdMs: createdMs)
            let offset = zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(at) / 1000))
            groups[Key(instant: at, offset: offset), default: []].append(name)
        }
        var out: [Wave] = []
        for (key, names) in groups.sorted(by: { ($0.key.instant, -$0.key.offset) < ($1.key.instant, -$1.key.offset) }) {
            let past = key.instant < createdMs
            if past && spec.skipPast { continue }
            out.append(Wave(
                atMs: max(key.instant, createdMs), localInstantMs: key.instant, utcOffsetSeconds: key.offset, zones: names.sorted(),
                includesUnzoned: names.contains(defaultZone), past: past))
        }
        return out
    }

    /// The instant (ms) of `spec`'s wall-clock time in `zone`: on its date, or the first one after `createdMs`.
    public static func instantMs(_ spec: LocalTimeSpec, in zone: TimeZone, createdMs: Int64) -> Int64 {
        if let date = spec.date { return localInstant(date, spec.hour, spec.minute, in: zone) * 1000 }
        let createdSeconds = Int64((Double(createdMs) / 1000).rounded(.down))
        let offset = Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(createdSeconds))))
        let today = CivilDate(daysSinceEpoch: floorDiv(createdSeconds + offset, 86_400))
        let first = localInstant(today, spec.hour, spec.minute, in: zone) * 1000
        return first > createdMs ? first : localInstant(today.next, spec.hour, spec.minute, in: zone) * 1000
    }

    /// Seconds since 1970 of `date` `hour`:`minute` local time in `zone`: the first occurrence when it happens twice,
    /// the end of the gap (the first valid minute after) when it does not happen.
    public static func localInstant(_ date: CivilDate, _ hour: Int, _ minute: Int, in zone: TimeZone) -> Int64 {
        let naive = date.daysSinceEpoch * 86_400 + Int64(hour * 3600 + minute * 60)
        func offset(_ t: Int64) -> Int64 { Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(t)))) }
        let candidates = Set([-172_800, -86_400, -43_200, 0, 43_200, 86_400, 172_800].map { offset(naive + Int64($0)) })
        let valid = candidates.map { naive - $0 }.filter { offset($0) == naive - $0 }
        if let first = valid.min() { return first }
        // A gap: the instant computed with the offset before the change is past it, the one with the offset after is
        // before it; the change itself is the first valid local minute after the time asked for.
        let sorted = candidates.sorted()
        var lo = naive - sorted.last!  // earliest candidate instant (largest offset)
        var hi = naive - sorted.first!  // latest
        if lo > hi { swap(&lo, &hi) }
        let before = offset(lo)
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2
            if offset(mid) == before { lo = mid } else { hi = mid }
        }
        return hi
    }

    private static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 {
        let q = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
    }
}
