import Foundation
import Logging
import PushCore
import PushStore
import Synchronization

/// Sends one notification to every registered device of an app (or a channel), safely under cron:
/// one running broadcast per app (a lease with heartbeat), resumable after a crash or a signal without
/// sending anyone a second copy (outcomes and checkpoint commit together; ids are derived per token), and
/// with memory that does not grow with the number of devices.
public final class Broadcaster: Sendable {
    let registry: Registry
    let bundleId: String
    let configuration: BroadcastConfiguration
    let clock: SenderClock
    let sleeper: Sleeper
    let logger: Logger

    /// Creates a broadcaster for an app's registry rows.
    public init(
        registry: Registry, bundleId: String, configuration: BroadcastConfiguration = .init(),
        clock: SenderClock = SystemClock(), sleeper: Sleeper = TaskSleeper(), logger: Logger = Logger(label: "broadcast")
    ) {
        self.registry = registry
        self.bundleId = bundleId
        self.configuration = configuration
        self.clock = clock
        self.sleeper = sleeper
        self.logger = logger
    }

    /// Runs or resumes `id`. `makeSender` builds the sender around the sink that records outcomes with
    /// checkpoints. `progress` is called about every `progressInterval` seconds while sending.
    public func run(
        id: String, stop: StopFlag, progressInterval: Double = 1,
        progress: @escaping @Sendable (BroadcastProgress) -> Void = { _ in },
        makeSender: (DeliverySink) throws -> Sender
    ) async throws -> BroadcastReport {
        guard var record = try registry.broadcast(id: id) else {
            throw BroadcastError(code: .store, message: "broadcast \(id) does not exist")
        }
        let owner = configuration.owner
        switch try registry.acquireLease(
            app: record.app, broadcastId: id, owner: owner, ttlMs: configuration.leaseTtlMs,
            ownerIsDead: BroadcastConfiguration.ownerIsDead)
        {
        case .held(let other): throw BroadcastError(code: .running(other), message: "broadcast \(other) is running")
        case .acquired: break
        }
        defer { try? registry.releaseLease(app: record.app, owner: owner) }

        if record.state == .pending || record.total == 0 {
            record.total = record.explicitTokens
                ? try registry.broadcastTokenCount(id: id)
                : try registry.count(app: record.app, channel: record.channel, environment: record.environment)
        }
        try registry.updateBroadcast(id: id, state: .running, total: record.total)
        record = try registry.broadcast(id: id) ?? record
        let doneBefore = try registry.broadcastCounts(id: id).done
        let started = ContinuousClock.now

        let tracker = CheckpointTracker()
        let sink = BroadcastSink(
            registry: registry, app: record.app, broadcastId: id, tracker: tracker, resumedThrough: record.dispatched)
        let sender = try makeSender(sink)
        let live = LiveProgress(total: record.total, doneBefore: doneBefore)
        let app = record.app

        let heartbeat = Task { [registry, configuration, logger] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(configuration.heartbeatMs))
                if Task.isCancelled { break }
                if (try? registry.renewLease(app: app, owner: owner, ttlMs: configuration.leaseTtlMs)) != true {
                    logger.error("lost the broadcast lease for \(app); stopping")
                    stop.raise(-1)
                }
            }
        }
        let reporter = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(Int64(progressInterval * 1000)))
                if Task.isCancelled { break }
                var p = live.snapshot
                p.elapsed = Self.seconds(since: started)
                progress(p)
            }
        }
        let source = BroadcastSource(
            registry: registry, record: record, bundleId: bundleId, batchSize: configuration.batchSize,
            tracker: tracker, stop: stop, pacer: Pacer(perSecond: configuration.rate), sleeper: sleeper, clock: clock)
        var failure: (any Error)?
        do {
            try await sender.run(stream: source) { result in
                live.add(result)
            }
        } catch {
            failure = error
        }
        await sender.shutdown()  // drains in-flight requests and writes the last outcomes + checkpoint
        if failure == nil {
            // Everything handed over has an outcome now, so the page read ahead was never sent: lower the
            // mark to what was. Tokens an earlier crashed run may have sent (≤ its mark) keep their flag.
            try registry.settleDispatched(id: id, to: max(tracker.lastDispatched, record.dispatched))
        }
        heartbeat.cancel()
        reporter.cancel()
        var final = live.snapshot
        final.elapsed = Self.seconds(since: started)
        progress(final)

        let counts = try registry.broadcastCounts(id: id)
        let summary = sender.summary
        let state: BroadcastState
        var error: String?
        if let failure {
            state = .interrupted
            error = "\(failure)"
        } else if stop.isRaised {
            state = .interrupted
        } else if !summary.stoppedEndpoints.isEmpty {
            state = .failed
            error = "APNs refused the credentials for \(summary.stoppedEndpoints.joined(separator: ", "))"
        } else {
            state = .completed
        }
        try registry.updateBroadcast(id: id, state: state, error: error)
        if let failure, state == .interrupted, !stop.isRaised { throw failure }
        return BroadcastReport(
            record: try registry.broadcast(id: id) ?? record, counts: counts, sender: summary,
            sentThisRun: final.done, seconds: final.elapsed, signal: stop.signal)
    }

    static func seconds(since start: ContinuousClock.Instant) -> Double {
        let d = ContinuousClock.now - start
        return Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }
}

/// Counters updated from the transport thread and read by the progress reporter.
final class LiveProgress: Sendable {
    private let state: Mutex<BroadcastProgress>

    init(total: Int, doneBefore: Int) {
        var p = BroadcastProgress()
        p.total = total
        p.doneBefore = doneBefore
        state = Mutex(p)
    }

    func add(_ result: DeliveryResult) {
        state.withLock { p in
            p.done += 1
            if result.kind == .accepted { p.accepted += 1 } else { p.failed += 1 }
            if result.pruned { p.pruned += 1 }
        }
    }

    var snapshot: BroadcastProgress { state.withLock { $0 } }
}
