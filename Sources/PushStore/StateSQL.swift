import PushCore

/// SQL spellings of PushCore's named state sets and of the lease rule (SQLite and PostgreSQL alike), so no query
/// lists states or compares `expires_ms` by hand.
enum StateSQL {
    /// `'a', 'b'`: the raw values of `states`, quoted, for `IN (…)`.
    static func list<S: RawRepresentable>(_ states: [S]) -> String where S.RawValue == String {
        states.map { "'\($0.rawValue)'" }.joined(separator: ", ")
    }

    /// ``PushCore/BroadcastState/unfinished``.
    static let unfinished = list(BroadcastState.unfinished)
    /// ``PushCore/BroadcastState/ended``.
    static let ended = list(BroadcastState.ended)
    /// ``PushCore/BroadcastState/workable``.
    static let workable = list(BroadcastState.workable)
    /// The states a claim or a resume moves to running (``PushCore/BroadcastState/changed(by:)``).
    static let resumable = list(BroadcastState.changed(by: .claim))

    /// A live lease on a claimed shard (``PushCore/ShardLease/isLive(expiresMs:now:)``), for a shard table aliased
    /// `shard` ("" for none) at the SQL expression `now`.
    static func liveClaim(_ shard: String = "", now: String) -> String {
        let prefix = shard.isEmpty ? "" : shard + "."
        return "(\(prefix)state = 'claimed' AND \(ShardLease.liveSQL(expires: prefix + "expires_ms", now: now)))"
    }
}
