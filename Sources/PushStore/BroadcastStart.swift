import PushCore

/// What starting a broadcast does (``DeliveryStore/startBroadcast(id:shardSize:newRound:)``), decided once for both
/// backends; each carries the step out in its own SQL.
enum BroadcastStart: Equatable {
    /// Nothing changes: a cancelled broadcast stays cancelled, and a completed one does without a new round.
    case unchanged
    /// The first start: the targets are counted and split into shards; the broadcast runs, run 1.
    case split
    /// A new round of a completed broadcast: every shard is pending again at once (its deferred devices are
    /// retried); run + 1.
    case newRound
    /// Started again (by hand, by the server): shards given back after a failure are claimable at once, and the
    /// broadcast runs unless it already does.
    case resume

    /// The step for `record` in its current state.
    static func step(for record: BroadcastRecord, hasShards: Bool, newRound: Bool) -> BroadcastStart {
        if record.state == .cancelled { return .unchanged }
        if !hasShards { return .split }
        if record.state == .completed { return newRound ? .newRound : .unchanged }
        return .resume
    }

    /// Every how many targeted tokens a shard ends (the tokens at those ranks are the cuts), or nil for one shard:
    /// about `shardSize`, but never more than 65,536 shards.
    static func cutEvery(total: Int64, shardSize: Int) -> Int64? {
        let size = max(Int64(max(1, shardSize)), (total + 65_535) / 65_536)
        return total > size ? size : nil
    }
}
