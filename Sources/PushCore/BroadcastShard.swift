/// One range shard of a broadcast: the tokens in (``lo``, ``hi``] of the token key space, worked on by one
/// worker at a time under a fenced lease, with its own checkpoint. A broadcast of N devices is split into
/// about N / shard size shards when it starts, cut at every shard-size-th targeted token so shards are even
/// whatever the tokens look like; a broadcast is completed when its last shard is. The first shard starts at
/// "" and the last ends at ``keySpaceEnd``, so a device registered after the split still falls in exactly one
/// shard.
public struct BroadcastShard: Sendable, Equatable {
    /// Where a shard is.
    public enum State: String, Sendable, CaseIterable {
        /// Not held by anyone; claimable from ``BroadcastShard/availableMs``.
        case pending
        /// Held by ``BroadcastShard/owner`` until ``BroadcastShard/expiresMs`` (the store's clock).
        case claimed
        /// Every device of the shard has an outcome (final, or deferred until the next round).
        case done
    }

    /// The broadcast.
    public var broadcastId: String
    /// Its number within the broadcast (0-based, in key order).
    public var index: Int
    /// Tokens greater than this…
    public var lo: String
    /// …and at most this.
    public var hi: String
    /// The state.
    public var state: State
    /// The worker holding it ("" when not claimed).
    public var owner: String
    /// Grows with every claim: writes under an older fence fail with ``DeliveryStoreError/Code/leaseLost``.
    public var fence: Int64
    /// Claims so far (the current claim's run number): outcomes carry it, and a claim retries devices
    /// deferred by earlier ones.
    public var run: Int
    /// Main pass: every token of the shard ≤ this has a committed outcome ("" before the first).
    public var checkpoint: String
    /// Main pass: tokens ≤ this may have been handed to the sender.
    public var dispatched: String
    /// True once the main pass went through the whole shard (later claims only retry deferred devices).
    public var mainDone: Bool
    /// The run whose retry pass wrote ``retryDispatched`` (0: none).
    public var retryRun: Int
    /// Retry pass of ``retryRun``: deferred tokens ≤ this may have been handed to the sender.
    public var retryDispatched: String
    /// A claim lasts until then (ms since 1970, the store's clock).
    public var expiresMs: Int64

    /// Creates a shard record.
    public init(
        broadcastId: String, index: Int, lo: String, hi: String, state: State = .pending, owner: String = "",
        fence: Int64 = 0, run: Int = 0, checkpoint: String = "", dispatched: String = "", mainDone: Bool = false,
        retryRun: Int = 0, retryDispatched: String = "", expiresMs: Int64 = 0
    ) {
        self.broadcastId = broadcastId
        self.index = index
        self.lo = lo
        self.hi = hi
        self.state = state
        self.owner = owner
        self.fence = fence
        self.run = run
        self.checkpoint = checkpoint
        self.dispatched = dispatched
        self.mainDone = mainDone
        self.retryRun = retryRun
        self.retryDispatched = retryDispatched
        self.expiresMs = expiresMs
    }

    /// Greater than every token (hex digits sort below it).
    public static let keySpaceEnd = "g"

    /// The default number of devices per shard: 10M devices make 400 shards.
    public static let defaultSize = 25_000

    /// The (lo, hi] ranges that `cuts` (ascending tokens, each the last of its shard) split the key space into:
    /// one more range than cuts.
    public static func ranges(cuts: [String]) -> [(lo: String, hi: String)] {
        let bounds = [""] + cuts + [keySpaceEnd]
        return (0..<bounds.count - 1).map { (bounds[$0], bounds[$0 + 1]) }
    }
}
