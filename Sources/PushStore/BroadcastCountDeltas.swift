import PushCore

/// What one commit adds to a broadcast's counters (``BroadcastCounts``), by kind and reason key — the one place
/// both backends take their counting rules from:
/// - accepted devices are the engine's tally (``OutcomeBatch/Job/accepted``): they have no rows;
/// - every other outcome but a pending one counts with its row, and the row it replaces (a deferred device
///   retried, a pending one answered) is uncounted in the same commit, so a device counts once whatever happens;
/// - a prune the breaker released later adds to its row's `pruned`.
struct BroadcastCountDeltas: Equatable {
    struct Key: Hashable, Comparable {
        var kind: DeliveryOutcome.Kind
        var reason: String

        static func < (a: Key, b: Key) -> Bool { (a.kind.rawValue, a.reason) < (b.kind.rawValue, b.reason) }
    }

    struct Delta: Equatable {
        var devices = 0
        var retried = 0
        var possiblyDuplicated = 0
        var pruned = 0

        var isZero: Bool { devices == 0 && retried == 0 && possiblyDuplicated == 0 && pruned == 0 }
    }

    private(set) var deltas: [Key: Delta] = [:]
    /// Outcomes this commit settles for the claim's `sent` count (accepted ones counted, and the others but pending).
    private(set) var settled = 0

    /// The changes `batch` makes, given the rows the broadcast held before it for the batch's tokens (`before`,
    /// by token hex; see ``OutcomeBatch/tokensToLookUp``) and the tokens the store pruned in this commit.
    init(_ batch: OutcomeBatch, before: [String: OutcomeRow], pruned: Set<DeviceToken>) {
        guard let job = batch.job else { return }
        let accepted = job.accepted
        if accepted.count > 0 {
            add(Key(kind: .accepted, reason: ""), Delta(
                devices: accepted.count, retried: accepted.retried, possiblyDuplicated: accepted.possiblyDuplicated))
            settled += accepted.count
        }
        var after = before
        // By index, reading the fields used: `for o in` copied each outcome (its strings retained and released).
        for i in batch.outcomes.indices {
            let hex = batch.outcomes[i].token.hex
            if let old = after[hex] { remove(old) }
            if batch.outcomes[i].kind == .accepted {
                after[hex] = nil
                continue
            }
            let o = batch.outcomes[i]
            let row = OutcomeRow(
                kind: o.kind, status: o.status, reason: o.reason, attempts: o.attempts,
                possiblyDuplicated: o.possiblyDuplicated, pruned: o.kind == .tokenDead && pruned.contains(o.token))
            after[hex] = row
            if o.kind != .pending {
                add(row, sign: 1)
                settled += 1
            }
        }
        for token in batch.releasedPrunes where pruned.contains(token) {
            guard var row = after[token.hex], !row.pruned else { continue }
            if row.kind != .pending { add(Key(kind: row.kind, reason: row.countKey), Delta(pruned: 1)) }
            row.pruned = true
            after[token.hex] = row
        }
    }

    /// The non-zero changes, in key order.
    var rows: [(key: Key, delta: Delta)] {
        deltas.filter { !$0.value.isZero }.sorted { $0.key < $1.key }.map { (key: $0.key, delta: $0.value) }
    }

    private mutating func remove(_ row: OutcomeRow) {
        guard row.kind != .pending else { return }
        add(row, sign: -1)
    }

    private mutating func add(_ row: OutcomeRow, sign: Int) {
        add(Key(kind: row.kind, reason: row.countKey), Delta(
            devices: sign, retried: row.attempts > 1 ? sign : 0, possiblyDuplicated: row.possiblyDuplicated ? sign : 0,
            pruned: row.pruned ? sign : 0))
    }

    private mutating func add(_ key: Key, _ d: Delta) {
        var sum = deltas[key] ?? Delta()
        sum.devices += d.devices
        sum.retried += d.retried
        sum.possiblyDuplicated += d.possiblyDuplicated
        sum.pruned += d.pruned
        deltas[key] = sum
    }
}

extension OutcomeBatch {
    /// The tokens whose rows the store reads before writing the batch: every outcome but an accepted one that
    /// cannot have a row (``DeliveryOutcome/mayHaveRow``), and the released prunes. Empty without a job.
    var tokensToLookUp: [String] {
        guard job != nil else { return [] }
        var tokens = Set<String>()
        for i in outcomes.indices where outcomes[i].kind != .accepted || outcomes[i].mayHaveRow { tokens.insert(outcomes[i].token.hex) }
        for t in releasedPrunes { tokens.insert(t.hex) }
        return tokens.sorted()
    }

    /// The outcomes that leave a row, the last one per token (a token answered twice in a batch keeps its last).
    /// This and the other per-outcome scans of a commit go by index: iterating the outcomes copied each one.
    var rowOutcomes: [DeliveryOutcome] {
        guard job != nil, outcomes.indices.contains(where: { outcomes[$0].kind != .accepted }) else { return [] }
        var last: [DeviceToken: Int] = [:]
        for (i, o) in outcomes.enumerated() { last[o.token] = i }
        return outcomes.enumerated().filter { last[$0.element.token] == $0.offset && $0.element.kind != .accepted }.map(\.element)
    }

    /// The accepted outcomes whose row (if any) goes: the last outcome of their token is accepted and it may have one.
    var rowsRemoved: [DeviceToken] {
        guard job != nil, outcomes.indices.contains(where: { outcomes[$0].kind == .accepted && outcomes[$0].mayHaveRow })
        else { return [] }
        var last: [DeviceToken: DeliveryOutcome] = [:]
        for o in outcomes { last[o.token] = o }
        return outcomes.filter { $0.kind == .accepted && $0.mayHaveRow && last[$0.token] == $0 }.map(\.token)
    }
}
