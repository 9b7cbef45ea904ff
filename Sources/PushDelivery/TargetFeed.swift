import PushCore

/// The devices of one pass of a shard's claim, in token order, as keyset pages read off the cooperative pool. Before a
/// device is handed out, the pass's dispatch mark in the store covers it: the mark is written ahead in steps
/// of `markStep` devices (half the window: ``Broadcaster/markStep(for:)``), so after a crash the devices that may have been sent are
/// known without a write per device. On a resumed main pass, devices that already have a final or deferred
/// outcome are skipped, and those that may have reached APNs before are flagged.
///
/// Neither store round trip holds the sender up: once half of a mark step is handed out, the next step is
/// written in the background (devices past the durable mark still wait for it, so the mark leads by at most two
/// steps), and the next page is read while this one is handed out. Over a long round trip to APNs a feed that
/// stopped for each write would let the in-flight window run dry.
final class TargetFeed {
    /// A device to send to, whether an earlier run may already have reached APNs with it, and whether an
    /// earlier claim left it a row (pending in the main pass; every device of the retry pass has one).
    struct Next: Sendable {
        var target: DeliveryTarget
        var maybeSentBefore: Bool
        var hasRow = false
    }

    /// One page read from the store, and where the next one starts.
    private struct Page: Sendable {
        var devices: [Next]
        var last: String?
        var finished: Bool
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
    /// The page read in the background while this one is handed out.
    private var nextPage: Task<Result<Page, DeliveryStoreError>, Never>?
    /// The durable dispatch mark, and its index in `page` (-1 when it is not in this page).
    private var markedThrough = ""
    private var markedIndex = -1
    /// A mark write under way: how far it goes (token and index in `page`).
    private var markWrite: (through: String, index: Int, task: Task<Void, any Error>)?

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

    deinit {
        nextPage?.cancel()
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
        if !pacer.tryAdmit() { try await pacer.admit() }
        let next = page[index]
        let hex = next.target.token.hex
        if hex > markedThrough, let pending = markWrite {
            markWrite = nil
            try await Self.wait(for: pending.task)
            (markedThrough, markedIndex) = (pending.through, pending.index)
        }
        if hex > markedThrough {
            // Nothing written ahead (the pass's first device, a new page): this device waits for its mark.
            let to = min(page.count - 1, index + markStep - 1)
            let through = page[to].target.token.hex
            try await Self.wait(for: markTask(through))
            (markedThrough, markedIndex) = (through, to)
        }
        if markWrite == nil, markedIndex >= 0, markedIndex < page.count - 1, index + markStep / 2 >= markedIndex {
            let to = min(page.count - 1, markedIndex + markStep)
            let through = page[to].target.token.hex
            markWrite = (through, to, markTask(through))
        }
        index += 1
        return next
    }

    /// Writes the pass's dispatch mark through `through` (in a task of its own).
    private func markTask(_ through: String) -> Task<Void, any Error> {
        let access = access
        let id = record.id
        let index = shard.index
        let fence = shard.fence
        let pass = pass
        let run = shard.run
        return Task {
            try await access.run("marking dispatched devices") { store throws(DeliveryStoreError) in
                try store.markDispatched(id: id, index: index, fence: fence, pass: pass, run: run, through: through)
            }
        }
    }

    private static func wait<T>(for task: Task<T, any Error>) async throws(DeliveryStoreError) -> T {
        do {
            return try await task.value
        } catch let error as DeliveryStoreError {
            throw error
        } catch {
            throw DeliveryStoreError(.unknown(0), "\(error)")
        }
    }

    private func loadPage() async throws(DeliveryStoreError) {
        // The mark still being written belongs to the page ending: it is durable before the next one starts.
        if let pending = markWrite {
            markWrite = nil
            try await Self.wait(for: pending.task)
            markedThrough = pending.through
        }
        markedIndex = -1
        let loaded: Page
        if let prefetched = nextPage {
            nextPage = nil
            loaded = try await prefetched.value.get()
        } else {
            loaded = try await Self.fetch(pass: pass, record: record, shard: shard, after: after, limit: batchSize, access: access)
        }
        page = loaded.devices
        index = 0
        finished = loaded.finished
        if let last = loaded.last { after = last }
        if !finished {
            let pass = pass
            let record = record
            let shard = shard
            let from = after
            let limit = batchSize
            let access = access
            nextPage = Task { () async -> Result<Page, DeliveryStoreError> in
                do throws(DeliveryStoreError) {
                    return .success(try await TargetFeed.fetch(pass: pass, record: record, shard: shard, after: from, limit: limit, access: access))
                } catch {
                    return .failure(error)
                }
            }
        }
    }

    /// The page of the pass after `after`: the devices to hand out, with what earlier claims left for them.
    private static func fetch(
        pass: DeliveryPass, record: BroadcastRecord, shard: BroadcastShard, after: String, limit: Int, access: StoreAccess
    ) async throws(DeliveryStoreError) -> Page {
        switch pass {
        case .main:
            let targets = try await access.run("reading devices") { store throws(DeliveryStoreError) in
                try store.targets(of: record, after: after, through: shard.hi, limit: limit)
            }
            guard let last = targets.last else { return Page(devices: [], last: nil, finished: true) }
            // Resuming: devices up to the old dispatch mark may have an outcome already, or may have been sent.
            var stored: [String: StoredOutcome] = [:]
            if !shard.dispatched.isEmpty, targets[0].token.hex <= shard.dispatched {
                stored = try await access.run("reading earlier outcomes") { store throws(DeliveryStoreError) in
                    try store.storedOutcomes(id: record.id, after: after, through: last.token.hex)
                }
            }
            var devices: [Next] = []
            devices.reserveCapacity(targets.count)
            for target in targets {
                let hex = target.token.hex
                if let s = stored[hex] {
                    if s.kind != .pending { continue }  // final or deferred: done for the main pass
                    devices.append(Next(target: target, maybeSentBefore: s.possiblyDuplicated, hasRow: true))
                } else {
                    devices.append(Next(target: target, maybeSentBefore: hex <= shard.dispatched))
                }
            }
            return Page(devices: devices, last: last.token.hex, finished: targets.count < limit)
        case .retry:
            let rows = try await access.run("reading deferred devices") { store throws(DeliveryStoreError) in
                try store.deferredTargets(id: record.id, beforeRun: shard.run, after: after, through: shard.hi, limit: limit)
            }
            guard let last = rows.last else { return Page(devices: [], last: nil, finished: true) }
            // A retry pass of a claim that crashed may have sent devices up to its mark without committing them.
            let crashed = shard.retryRun > 0 && shard.retryRun < shard.run
            let devices = rows.map { target, previous in
                let inFlightAtCrash = crashed && previous.run < shard.retryRun && target.token.hex <= shard.retryDispatched
                return Next(target: target, maybeSentBefore: previous.possiblyDuplicated || inFlightAtCrash, hasRow: true)
            }
            return Page(devices: devices, last: last.target.token.hex, finished: rows.count < limit)
        }
    }
}
