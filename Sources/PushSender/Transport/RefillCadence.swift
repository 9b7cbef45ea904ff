/// When a transport hands the jobs waiting for it to libcurl: the refill cadence of one connection's loop.
///
/// Every pass libcurl makes over a connection visits each transfer on it (7.88 calls poll(2) for each), so a loop
/// that refilled its window one answer at a time paid as many passes as answers. Measured at 100 ms with 500 in
/// flight: 18 poll calls per notification against 9.5 in batches; the same bare-libcurl client spent 97 µs per
/// request refilling one at a time against 85 µs in batches of 100 (bench/RESULTS.md, "Refill cadence"). So with
/// more than ``batch`` transfers on the wire, new ones go in batches of at least ``batch``, or once the oldest has
/// waited ``holdMs``; with fewer on the wire (a broadcast's start, a single send), at once.
struct RefillCadence: Sendable, Equatable {
    /// A tenth of the connection's window (at most its stream limit), at least 1.
    let batch: Int
    /// How long a job may wait for its batch: a small part of a round trip to APNs (50–150 ms), and past the
    /// ~11 ms a batch of a 500 window takes to gather at 100 ms (4,500 answers a second), so it rarely fires.
    let holdMs: Int64

    init(window: Int, maxConcurrentStreams: Int, holdMs: Int64 = 20) {
        batch = max(1, min(window, maxConcurrentStreams) / 10)
        self.holdMs = holdMs
    }

    /// Whether `waiting` jobs, the oldest taken in `waitedMs` ago, go to libcurl now, with `active` on the wire.
    func admitsNow(waiting: Int, active: Int, waitedMs: Int64, stopping: Bool) -> Bool {
        guard waiting > 0 else { return false }
        return stopping || active < batch || waiting >= batch || waitedMs >= holdMs
    }

    /// Whether a job handed in must wake the polling loop: few transfers on the wire, or a batch complete
    /// (otherwise an answer, or the hold deadline the loop sleeps until, brings the loop round).
    func wakesOnSubmit(handedIn: Int, active: Int) -> Bool { active < batch || handedIn >= batch }
}
