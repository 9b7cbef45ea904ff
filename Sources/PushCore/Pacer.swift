/// `--rate N` as one schedule per broadcast, shared by every process working on it: the store keeps the
/// broadcast's rate and the time its next notification may go, and each process reserves a few notifications
/// at a time against it (see ``DeliveryStore/reserveSends(id:count:)``). Pure: the store supplies the stored
/// time and its clock, and keeps what this returns.
public enum Pacer {
    /// Reserves `count` notifications at `perSecond` on a schedule whose next free time is `nextMs`, at
    /// `nowMs` (both on the store's clock, in milliseconds). They may go at the later of the two, except that a
    /// schedule lagging behind now keeps up to ``catchUpMs`` (or one reservation, if longer) of the lag: the gaps
    /// between a process's shards and a stalled process cost no rate, and an idle schedule saves up no bigger
    /// burst than that. The schedule moves on by `count / perSecond`. A negative
    /// `count` gives back reserved notifications that were not sent (the end of a claim), never moving the
    /// schedule before now. Returns how long the caller waits, and the schedule's new next free time.
    public static func reserve(count: Int, perSecond: Double, nextMs: Double, nowMs: Double) -> (waitMs: Double, nextMs: Double) {
        guard perSecond > 0 else { return (0, nextMs) }
        let span = Double(count) * 1000 / perSecond
        if count < 0 { return (0, max(nowMs, nextMs + span)) }
        let start = max(nextMs, nowMs - max(span, catchUpMs))
        return (max(0, start - nowMs), start + span)
    }

    /// How far behind now a schedule may be caught up: a second's worth of notifications.
    public static let catchUpMs = 1000.0

    /// How many notifications a process reserves at once at `perSecond`: about a tenth of a second's worth (so
    /// several processes interleave finely and the store sees about ten reservations a second per process), at
    /// least one and at most 250.
    public static func chunk(perSecond: Double) -> Int {
        Int(min(250, max(1, (perSecond / 10).rounded(.down))))
    }
}

/// What ``DeliveryStore/reserveSends(id:count:)`` granted: how long to wait before sending, under which rate.
public struct RateReservation: Sendable, Equatable {
    /// Milliseconds to wait before sending the reserved notifications (0: at once).
    public var waitMs: Double
    /// The broadcast's rate (notifications per second over every process).
    public var perSecond: Double

    /// Creates one.
    public init(waitMs: Double, perSecond: Double) {
        self.waitMs = waitMs
        self.perSecond = perSecond
    }
}
