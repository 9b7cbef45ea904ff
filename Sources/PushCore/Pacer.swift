/// Spaces work out to at most `perSecond` items per second (`--rate N`), in small bursts so that a high
/// rate does not mean a sleep per item. Pure: the caller supplies the clock reading and does the sleeping.
public struct Pacer: Sendable {
    /// The allowed rate; nil means unlimited.
    public let perSecond: Double?
    private var start: Double?
    private var issued: Double = 0

    /// Creates a pacer. `perSecond` ≤ 0 or nil means no limit.
    public init(perSecond: Double?) {
        self.perSecond = perSecond.flatMap { $0 > 0 ? $0 : nil }
    }

    /// Records `count` more items at time `now` (seconds) and returns how long to wait before sending them
    /// so that the running average stays at or below the rate.
    public mutating func delay(forNext count: Int, now: Double) -> Double {
        guard let perSecond else { return 0 }
        if start == nil { start = now }
        let due = start! + issued / perSecond
        issued += Double(count)
        return max(0, due - now)
    }
}
