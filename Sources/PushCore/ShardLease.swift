/// The lease rule, once: when a claim on a shard is live, and who holds a broadcast's live claims. Every place that
/// asks — the claim (what may be taken over), a shard given back and a stopped run (is a worker left?), `pushctl
/// broadcast` (whom it joins), the engine's progress (whom it waits for) — asks here, or runs ``liveSQL(expires:now:)``.
public enum ShardLease {
    /// A claim's lease is live from the claim through `expiresMs` itself, on the store's clock (`now <= expiresMs`);
    /// from the next millisecond any worker may take the shard over.
    ///
    /// Why `<=` (and not the `>` that `pushctl broadcast`'s holders used): the claim rule takes a shard over when its
    /// lease is not live, and a stopped run is interrupted only when no lease is live. With one comparison for both,
    /// at every instant a claimed shard is exactly one of "held" or "claimable" — with `>` on one side and `<` on the
    /// other, the millisecond `expiresMs` was neither (not a holder, yet not claimable). Inclusive errs towards the
    /// holder: its renewal at `expiresMs` still counts.
    public static func isLive(expiresMs: Int64, now: Int64) -> Bool { now <= expiresMs }

    /// ``isLive(expiresMs:now:)`` as an SQL condition (SQLite and PostgreSQL alike) over the column or parameter
    /// expressions `expires` and `now`.
    public static func liveSQL(expires: String, now: String) -> String { "(\(now) <= \(expires))" }

    /// True when `shard` is claimed under a live lease at `now`.
    public static func isHeld(_ shard: BroadcastShard, now: Int64) -> Bool {
        shard.state == .claimed && isLive(expiresMs: shard.expiresMs, now: now)
    }

    /// The processes (``processName(_:)``, `host:pid`, in shard order, each once) holding a live claim on one of
    /// `shards` at `now`, leaving out the claims of worker `except` (a process asking about the others).
    public static func holders(of shards: [BroadcastShard], now: Int64, except: String? = nil) -> [String] {
        var seen: [String] = []
        for shard in shards where isHeld(shard, now: now) && shard.owner != except {
            let name = processName(shard.owner)
            if !seen.contains(name) { seen.append(name) }
        }
        return seen
    }

    /// `host:pid` of a worker id (`host:pid:nonce`): how progress lines and messages name a process.
    public static func processName(_ owner: String) -> String {
        let parts = owner.split(separator: ":")
        return parts.count == 3 ? "\(parts[0]):\(parts[1])" : owner
    }
}

extension DeliveryStore {
    /// The processes holding a live claim on broadcast `id`'s shards, on the store's clock (``ShardLease/holders(of:now:except:)``),
    /// leaving out worker `except`.
    @available(*, noasync, message: "blocks on the database: use perform { } from async code")
    public func holders(of id: String, except: String? = nil) throws(DeliveryStoreError) -> [String] {
        let now = try clockMs()
        return ShardLease.holders(of: try shards(id: id), now: now, except: except)
    }
}
