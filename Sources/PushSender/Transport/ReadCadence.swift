/// When a transport hands a readable HTTP/2 connection to libcurl: the answer cadence of one connection's loop, the
/// reading side of ``RefillCadence``.
///
/// libcurl (7.88 and 8.14 alike) runs every transfer on a connection for each event on its socket, and 7.88 calls
/// poll(2) for each: a pass costs what is in flight, however few answers it brings. A fast server answers in bursts,
/// so a pass carries dozens of answers; a server that is the bottleneck answers one by one, and then each answer cost
/// a whole pass — against a Web Push service answering ~280/s with ~1,000 in flight, 1.8 ms of CPU and ~80 poll calls
/// per notification, five times the fast server's (issue 57). So when passes bring few answers for what is in
/// flight, the connection's next readable event is held (not handed to libcurl) for ``holdMs``, and the answers that
/// arrive meanwhile go through libcurl in one pass. The hold doubles while passes stay thin and halves when one is
/// full, so it settles where a pass carries about ``fullPassShare`` of the transfers in flight.
///
/// What it costs: an answer is read up to ``holdMs`` late. The hold never exceeds a tenth of the answers' recent
/// round trip (``latencyShare``), so a window's throughput (window ÷ round trip) drops by at most about a tenth, and
/// then only while the server is the bottleneck anyway; and never ``maximumHoldMs``. A connection with fewer than
/// ``minimumActive`` transfers in flight (a broadcast's start, single sends, a new connection's probe) is never held.
struct ReadCadence: Sendable, Equatable {
    /// Below this many transfers in flight a pass is cheap: readable events go to libcurl at once.
    static let minimumActive = 64
    /// A pass that finishes at least this share (1/n) of the transfers in flight pays for itself.
    static let fullPassShare = 16
    /// A hold is at most this share (1/n) of the recent round trip.
    static let latencyShare = 10
    /// And never longer than this.
    static let maximumHoldMs = 250

    /// How long the next readable event waits before it goes to libcurl; 0: at once.
    private(set) var holdMs = 0
    /// The answers' recent round trip, from request written to answer read (an exponential average), ms.
    private(set) var roundTripMs: Double = 0

    /// An answer arrived `roundTripMs` after its request was written.
    mutating func answered(roundTripMs sample: Int64) {
        let x = Double(max(0, sample))
        roundTripMs = roundTripMs == 0 ? x : roundTripMs + (x - roundTripMs) / 64
    }

    /// libcurl read the connection with `active` transfers in flight, and `finished` of them ended.
    mutating func passed(finished: Int, active: Int) {
        guard active >= Self.minimumActive else {
            holdMs = 0
            return
        }
        let cap = min(Self.maximumHoldMs, Int(roundTripMs) / Self.latencyShare)
        if finished < max(4, active / Self.fullPassShare) {
            holdMs = min(cap, max(1, holdMs * 2))
        } else {
            holdMs = min(cap, holdMs / 2)
        }
    }
}
