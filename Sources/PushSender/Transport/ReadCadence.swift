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
/// full, so it settles where a pass carries about ``fullPassShare`` of the transfers in flight: each answer then costs
/// about that many transfer visits, as in a fast server's bursts.
///
/// What it costs, and why it does not slow a broadcast: an answer is read up to ``holdMs`` late, and its transfer's
/// slot in the window comes free that much later. Two bounds keep that off the throughput:
/// - A tenth of the answers' recent round trip (``latencyShare``): when the window is what limits the rate (window ÷
///   round trip), it drops by at most about a tenth.
/// - While the server queues — the recent round trip well above the shortest of the last 5–10 s
///   (``minimumRoundTripMs``: what an answer takes with no queue) — up to half the time answers wait in its queue
///   (``queueShare``): the server is the bottleneck, the window holds more than it needs, and an answer held for
///   less than the queue's length frees a slot the server would not have used sooner (it still has the queue's other
///   half to work on). At 300 answers/s with 1,000 in flight the queue is ~3.3 s, and a tenth of that was 330 ms of
///   holds that left each pass at ~75 answers, 13 visits each; with half, passes carry ~250.
/// And never ``maximumHoldMs``, nor more than a quarter of what the round trip leaves of the request timeout (a held
/// answer must not time out in the socket buffer). A connection with fewer than ``minimumActive`` transfers in flight
/// (a broadcast's start or end, single sends, a new connection's probe) is never held.
struct ReadCadence: Sendable, Equatable {
    /// Below this many transfers in flight a pass is cheap: readable events go to libcurl at once.
    static let minimumActive = 64
    /// A pass that finishes at least this share (1/n) of the transfers in flight pays for itself.
    static let fullPassShare = 4
    /// A hold is at most this share (1/n) of the recent round trip.
    static let latencyShare = 10
    /// While the server queues, a hold is at most this share (1/n) of the time answers wait in its queue.
    static let queueShare = 2
    /// And never longer than this.
    static let maximumHoldMs = 1000
    /// The shortest round trip is the least of the last two epochs of this length.
    static let minimumEpochMs: Int64 = 5_000

    /// The transfers' request timeout (``SenderConfiguration/requestTimeoutMs``), which a hold must leave room in.
    let requestTimeoutMs: Int

    init(requestTimeoutMs: Int = 30_000) {
        self.requestTimeoutMs = requestTimeoutMs
    }

    /// How long the next readable event waits before it goes to libcurl; 0: at once.
    private(set) var holdMs = 0
    /// The answers' recent round trip, from request written to answer read (an exponential average), ms.
    private(set) var roundTripMs: Double = 0
    /// The shortest round trip of this epoch and of the one before, and when this epoch began.
    private var epochMinimumMs: Int64 = .max
    private var previousMinimumMs: Int64 = .max
    private var epochStartMs: Int64 = 0

    /// The shortest recent round trip: what an answer takes when the server has no queue.
    var minimumRoundTripMs: Int64 { min(epochMinimumMs, previousMinimumMs) }

    /// An answer arrived `roundTripMs` after its request was written, at `nowMs`.
    mutating func answered(roundTripMs sample: Int64, nowMs: Int64 = 0) {
        let x = Double(max(0, sample))
        roundTripMs = roundTripMs == 0 ? x : roundTripMs + (x - roundTripMs) / 64
        if nowMs - epochStartMs >= Self.minimumEpochMs {
            previousMinimumMs = epochMinimumMs
            epochMinimumMs = .max
            epochStartMs = nowMs
        }
        epochMinimumMs = min(epochMinimumMs, max(0, sample))
    }

    /// The longest hold now: a tenth of the round trip, or half of the server's queue when it has one, within the
    /// absolute cap and a quarter of what the round trip leaves of the request timeout.
    var capMs: Int {
        let roundTrip = Int(roundTripMs)
        let queued = roundTrip - Int(min(minimumRoundTripMs, Int64(roundTrip)))
        let cap = max(roundTrip / Self.latencyShare, queued / Self.queueShare)
        return min(Self.maximumHoldMs, max(0, requestTimeoutMs - roundTrip) / 4, cap)
    }

    /// libcurl read the connection with `active` transfers in flight, and `finished` of them ended.
    mutating func passed(finished: Int, active: Int) {
        guard active >= Self.minimumActive else {
            holdMs = 0
            return
        }
        let cap = capMs
        if finished < max(4, active / Self.fullPassShare) {
            holdMs = min(cap, max(1, holdMs * 2))
        } else {
            holdMs = min(cap, holdMs / 2)
        }
    }
}
