import PushCore
import PushSender

/// The devices of one pass of a shard's claim, in token order, as keyset pages read off the cooperative pool. Before a
/// device is handed out, the pass's dispatch mark in the store covers it: the mark is written ahead in steps
/// of `markStep` devices (a quarter of the window), so after a crash the devices that may have been sent are
/// known without a write per device. On a resumed main pass, devices that already have a final or deferred
/// outcome are skipped, and those that may have reached APNs before are flagged.
final class TargetFeed {
    /// A device to send to, whether an earlier run may already have reached APNs with it, and whether an
    /// earlier claim left it a row (pending in the main pass; every device of the retry pass has one).
    struct Next {
        var target: DeliveryTarget
        var maybeSentBefore: Bool
        var hasRow = false
    }

    private let pass: DeliveryPass
    private let record: BroadcastRecord
    private let shard: BroadcastShard
    private let access: StoreAccess
    private let batchSize: Int
    private let markStep: Int
    private let pacer: RatePacer

    private var page: [Next] = []
    private var index = 0
    private var after: String
    private var finished = false
    private var markedThrough = ""

    init(
        pass: DeliveryPass, record: BroadcastRecord, shard: BroadcastShard, access: StoreAccess, batchSize: Int,
        markStep: Int, sleeper: Sleeper
    ) {
        self.pass = pass
        self.record = record
        self.shard = shard
        self.access = access
        self.batchSize = max(1, batchSize)
        self.markStep = max(1, markStep)
        self.pacer = RatePacer(id: record.id, access: access, sleeper: sleeper)
        after = pass == .main ? max(shard.lo, shard.checkpoint) : shard.lo
    }

    /// The next device, or nil at the end of the pass.
    func next() async throws(DeliveryStoreError) -> Next? {
        while index >= page.count {
            if finished {
                await pacer.finish()
                return nil
            }
            try await loadPage()
        }
        // The broadcast's rate (`--rate`), shared with every process working on it.
        try await pacer.admit()
        let next = page[index]
        let hex = next.target.token.hex
        if hex > markedThrough {
            let ahead = min(page.count - 1, index + markStep - 1)
            let through = page[ahead].target.token.hex
            let (id, index, fence, pass, run) = (record.id, shard.index, shard.fence, pass, shard.run)
            try await access.run("marking dispatched devices") { store throws(DeliveryStoreError) in
                try store.markDispatched(id: id, index: index, fence: fence, pass: pass, run: run, through: through)
            }
            markedThrough = through
        }
        index += 1
        return next
    }

    private func loadPage() async throws(DeliveryStoreError) {
        let (record, shard, after, limit) = (record, shard, after, batchSize)
        page = []
        index = 0
        switch pass {
        case .main:
            let targets = try await access.run("reading devices") { store throws(DeliveryStoreError) in
                try store.targets(of: record, after: after, through: shard.hi, limit: limit)
            }
            guard let last = targets.last else {
                finished = true
                return
            }
            // Resuming: devices up to the old dispatch mark may have an outcome already, or may have been sent.
            var stored: [String: StoredOutcome] = [:]
            if !shard.dispatched.isEmpty, targets[0].token.hex <= shard.dispatched {
                stored = try await access.run("reading earlier outcomes") { store throws(DeliveryStoreError) in
                    try store.storedOutcomes(id: record.id, after: after, through: last.token.hex)
                }
            }
            page.reserveCapacity(targets.count)
            for target in targets {
                let hex = target.token.hex
                if let s = stored[hex] {
                    if s.kind != .pending { continue }  // final or deferred: done for the main pass
                    page.append(Next(target: target, maybeSentBefore: s.possiblyDuplicated, hasRow: true))
                } else {
                    page.append(Next(target: target, maybeSentBefore: hex <= shard.dispatched))
                }
            }
            self.after = last.token.hex
            if targets.count < limit { finished = true }
        case .retry:
            let rows = try await access.run("reading deferred devices") { store throws(DeliveryStoreError) in
                try store.deferredTargets(id: record.id, beforeRun: shard.run, after: after, through: shard.hi, limit: limit)
            }
            guard let last = rows.last else {
                finished = true
                return
            }
            // A retry pass of a claim that crashed may have sent devices up to its mark without committing them.
            let crashed = shard.retryRun > 0 && shard.retryRun < shard.run
            for (target, previous) in rows {
                let inFlightAtCrash = crashed && previous.run < shard.retryRun && target.token.hex <= shard.retryDispatched
                page.append(Next(target: target, maybeSentBefore: previous.possiblyDuplicated || inFlightAtCrash, hasRow: true))
            }
            self.after = last.target.token.hex
            if rows.count < limit { finished = true }
        }
    }
}
