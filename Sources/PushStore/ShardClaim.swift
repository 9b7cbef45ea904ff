import PushCore

/// Which shard a worker may claim (``DeliveryStore/claimShard(broadcastId:apps:owner:ttlMs:ownerIsDead:)``), once for
/// both backends: a pending shard whose retry time has come, or a claimed one whose lease expired or whose holder is
/// a process of this host that is gone (a crash, `kill -9`: taken over at once instead of after the lease).
///
/// SQLite walks the candidate shards and asks ``allows(state:availableMs:expiresMs:holder:)``; PostgreSQL has the
/// database choose under `FOR UPDATE SKIP LOCKED` (so claims on many hosts never wait on each other) with
/// ``postgresCondition``, the same rule in SQL. Both take the holders that are gone from ``deadHolders(among:)``.
struct ShardClaim {
    /// Who claims.
    let owner: String
    /// Now on the store's clock.
    let now: Int64
    /// Holders whose claims may be taken over before they expire.
    let dead: Set<String>

    /// `host:` of an owner `host:pid:n`: the holders a process can see are gone are those of its own host.
    var hostPrefix: String { String(owner.prefix { $0 != ":" }) + ":" }

    /// The holders of unexpired claims (the database lists them: other owners of this host) that `isDead` says
    /// are gone; the caller's own claims never count.
    static func deadHolders(among holders: [String], owner: String, isDead: (String) -> Bool) -> Set<String> {
        Set(holders.filter { $0 != owner && isDead($0) })
    }

    /// The rule.
    func allows(state: String, availableMs: Int64, expiresMs: Int64, holder: String) -> Bool {
        switch state {
        case "pending": availableMs <= now
        case "claimed": !ShardLease.isLive(expiresMs: expiresMs, now: now) || dead.contains(holder)
        default: false
        }
    }

    /// ``allows(state:availableMs:expiresMs:holder:)`` as a condition on `broadcast_shards s`, with `$1` now and `$2`
    /// the dead holders (`text[]`).
    static let postgresCondition = """
        ((s.state = 'pending' AND s.available_ms <= $1)
            OR (s.state = 'claimed' AND (NOT \(ShardLease.liveSQL(expires: "s.expires_ms", now: "$1")) OR s.owner = ANY($2::text[]))))
        """
}
