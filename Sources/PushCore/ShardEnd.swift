/// How a claim of a shard ends (``DeliveryStore/finishShard(id:index:fence:end:)``).
public enum ShardEnd: Sendable, Equatable {
    /// Every device of the shard has an outcome: the shard is done.
    case finished
    /// The claim stopped early and gives the shard back, claimable again after `retryAfterMs`. `mainDone`
    /// says the main pass went through; `settledDispatched`, after a graceful stop, lowers the main-pass
    /// dispatch mark to what was really handed over; `error` says why it stopped.
    case released(error: String?, retryAfterMs: Int64, mainDone: Bool, settledDispatched: String?)
}
