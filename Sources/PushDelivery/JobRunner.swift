import Foundation
import Logging
import PushCore
import PushLanes
import Synchronization

/// Runs the server's send jobs with the broadcast engine: jobs of different apps concurrently, jobs of one
/// app in order (one lane per app), each with its own stop flag, through one long-lived sender per app (one
/// connection, one provider token, one pruning breaker). Jobs live in the store: unfinished ones are resumed
/// when the server starts, and a job interrupted by an APNs or database outage is tried again after
/// ``Settings/interruptedRetrySeconds``. A job interrupted by refused credentials waits for the operator: the
/// app's sender is dropped, so once the credentials files are fixed the same request again (or a restart)
/// resumes it with credentials read afresh. A scheduled job (``BroadcastRecord/scheduledMs``) waits, stored,
/// until the store's clock reaches its time, and is started within ``Settings/scheduleCheckSeconds`` of it.
public final class JobRunner: Sendable {
    /// Timing of retries.
    public struct Settings: Sendable {
        /// How long to wait before resuming a job interrupted by an APNs or database outage.
        public var interruptedRetrySeconds: Double = 60
        /// How often the runner looks for unfinished jobs it is not handling (see ``JobRunner/adoptUnfinished()``).
        public var adoptionIntervalSeconds: Double = 30
        /// How often it looks for scheduled jobs whose time has come: how late at most one starts.
        public var scheduleCheckSeconds: Double = 1
        /// The defaults.
        public init() {}
    }

    /// Builds the long-lived sender of an app, continuing its persisted pruning breakers.
    public typealias SenderFactory = @Sendable (_ app: String, _ breakers: [String: PruningBreaker.State]) throws -> any DeliverySender

    private let store: DeliveryStore
    /// The ids of the apps served; a reload replaces them (``reload(apps:)``).
    private let appsNow: Mutex<Set<String>>
    private var apps: Set<String> { appsNow.withLock { $0 } }
    private let makeSender: SenderFactory
    private let configuration: BroadcastConfiguration
    private let settings: Settings
    private let logger: Logger
    private let state = Mutex(State())

    private struct State {
        var lanes: [String: Lane] = [:]
        var senders: [String: any DeliverySender] = [:]
        /// Senders a reload replaced while a job of their app was using them: shut down when that job ends.
        var retiring: [String: any DeliverySender] = [:]
        /// Jobs running now, by app (lanes run one job of an app at a time).
        var busy: [String: Int] = [:]
        var running: [String: StopFlag] = [:]
        /// Jobs queued, running or waiting to be retried here (``adoptUnfinished()`` leaves them alone).
        var tracked: Set<String> = []
        var adopter: Task<Void, Never>?
        var shuttingDown = false
    }

    private struct Lane {
        let continuation: AsyncStream<Request>.Continuation
        let task: Task<Void, Never>
    }

    private struct Request: Sendable {
        var id: String
        /// Also run a completed job (its deferred devices are retried).
        var evenIfCompleted: Bool
    }

    /// Creates a runner for the apps with these ids.
    public init(
        store: DeliveryStore, apps: Set<String>, configuration: BroadcastConfiguration = .init(),
        settings: Settings = .init(), logger: Logger, makeSender: @escaping SenderFactory
    ) {
        self.store = store
        self.appsNow = Mutex(apps)
        self.makeSender = makeSender
        self.configuration = configuration
        self.settings = settings
        self.logger = logger
    }

    /// Queues a stored job of `app`. With `retryDeferred`, a completed job runs again for its deferred devices.
    public func enqueue(_ id: String, app: String, retryDeferred: Bool = false) {
        guard apps.contains(app) else { return }
        state.withLock { s in
            guard !s.shuttingDown else { return }
            if s.lanes[app] == nil {
                let (stream, continuation) = AsyncStream<Request>.makeStream()
                let task = Task { [self] in
                    for await request in stream {
                        if state.withLock({ $0.shuttingDown }) { break }
                        let retrying = await runJob(request, app: app)
                        if !retrying { _ = state.withLock { $0.tracked.remove(request.id) } }
                    }
                }
                s.lanes[app] = Lane(continuation: continuation, task: task)
            }
            s.tracked.insert(id)
            s.lanes[app]?.continuation.yield(Request(id: id, evenIfCompleted: retryDeferred))
        }
    }

    /// Queues every unfinished job of a configured app (after a restart).
    public func resumeUnfinished() async {
        let access = StoreAccess(store: store, outageLimitMs: configuration.storeOutageLimitMs, logger: logger)
        do throws(DeliveryStoreError) {
            let (unfinished, now) = try await access.run("reading unfinished jobs") { store throws(DeliveryStoreError) in
                (try store.unfinishedBroadcasts(), try store.clockMs())
            }
            for record in unfinished where apps.contains(record.app) && !record.isWaiting(atMs: now) {
                logger.info("resuming send job \(record.id) (\(record.state.rawValue))")
                enqueue(record.id, app: record.app)
            }
        } catch {
            logger.error("cannot read unfinished send jobs: \(error.message)")
        }
    }

    /// Queues the unfinished jobs of configured apps that this runner is not already handling: with several
    /// servers on one database, a job another instance was running when it stopped (or died, once its lease
    /// expired) is finished here. The server calls it periodically.
    public func adoptUnfinished() async {
        await look(adopting: true)
    }

    /// Queues the scheduled jobs of configured apps whose time has come on the store's clock (and, when
    /// `adopting`, every other unfinished job not handled here, see ``adoptUnfinished()``).
    public func startDueJobs() async {
        await look(adopting: false)
    }

    private func look(adopting: Bool) async {
        let access = StoreAccess(store: store, outageLimitMs: configuration.storeOutageLimitMs, logger: logger)
        let unfinished: [BroadcastRecord], now: Int64
        do throws(DeliveryStoreError) {
            (unfinished, now) = try await access.run("reading unfinished jobs", retry: false) { store throws(DeliveryStoreError) in
                (try store.unfinishedBroadcasts(), try store.clockMs())
            }
        } catch {
            // Looked at again at the next schedule check.
            logger.warning("cannot read unfinished send jobs: \(error.message)")
            return
        }
        for record in unfinished where apps.contains(record.app) && !record.isWaiting(atMs: now) {
            let scheduled = record.state == .pending && record.scheduledMs != nil
            guard adopting || scheduled else { continue }
            let known = state.withLock { $0.tracked.contains(record.id) || $0.shuttingDown }
            if known { continue }
            if scheduled, let at = record.scheduledMs {
                let late = now - at
                logger.info("starting scheduled send job \(record.id) (due \(Timestamp.rfc3339(ms: at))\(late >= 60_000 ? ", \(late / 1000) s late" : ""))")
            } else {
                logger.info("adopting send job \(record.id) (\(record.state.rawValue))")
            }
            enqueue(record.id, app: record.app)
        }
    }

    /// Starts scheduled jobs as their time comes (checked every ``Settings/scheduleCheckSeconds``) and calls
    /// ``adoptUnfinished()`` every ``Settings/adoptionIntervalSeconds``, until ``shutdown()``.
    public func startAdopting() {
        let tick = max(1, Int64(settings.scheduleCheckSeconds * 1000))
        let adoptEvery = max(tick, Int64(settings.adoptionIntervalSeconds * 1000))
        let task = Task { [self] in
            var sinceAdoption: Int64 = 0
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(tick))
                if Task.isCancelled { break }
                sinceAdoption += tick
                let adopting = sinceAdoption >= adoptEvery
                if adopting { sinceAdoption = 0 }
                await look(adopting: adopting)
            }
        }
        state.withLock { s in
            s.adopter?.cancel()
            s.adopter = task
        }
    }

    /// The long-lived sender of each app that has sent here (for `/metrics`).
    public var senders: [String: any DeliverySender] { state.withLock { $0.senders } }

    /// Stops job `id` at once if it runs here (the caller has marked it cancelled in the store; other processes
    /// working on it stop at their next lease renewal).
    public func cancel(_ id: String) {
        state.withLock { s in
            s.running[id]?.raise(.leaseLost("send job \(id) was cancelled"))
        }
    }

    /// Stops every running job at a checkpoint, waits for them and shuts the senders down.
    public func shutdown() async {
        let (lanes, senders) = state.withLock { s -> ([Lane], [any DeliverySender]) in
            s.shuttingDown = true
            s.adopter?.cancel()
            for flag in s.running.values { flag.raise(signal: SIGTERM) }
            for lane in s.lanes.values { lane.continuation.finish() }
            return (Array(s.lanes.values), Array(s.senders.values))
        }
        for lane in lanes { await lane.task.value }
        for sender in senders { await sender.shutdown() }
    }

    /// Runs one job; true when it scheduled a retry of itself.
    private func runJob(_ request: Request, app: String) async -> Bool {
        guard apps.contains(app) else { return false }
        let id = request.id
        let access = StoreAccess(store: store, outageLimitMs: configuration.storeOutageLimitMs, logger: logger)
        let found: BroadcastRecord?, now: Int64
        do throws(DeliveryStoreError) {
            (found, now) = try await access.run("reading the job") { store throws(DeliveryStoreError) in
                (try store.broadcast(id: id), try store.clockMs())
            }
        } catch {
            // The database outlasted its outage limit: the job stays stored and is tried again later.
            logger.error("send job \(id): \(error.message)", metadata: ["app": "\(app)", "job": "\(id)"])
            retry(id, app: app, after: settings.interruptedRetrySeconds)
            return true
        }
        // The one run-again table: a cancelled id, a job not yet due (queued again when its time comes) and a completed
        // one nobody asked to retry are not run.
        let stored = found.map {
            RunAgain.Found(state: $0.state, sameJob: true, waiting: $0.isWaiting(atMs: now), deferred: 0)
        }
        guard RunAgain.decide(id: id, found: stored, request: .queued(retryDeferred: request.evenIfCompleted)).runs else { return false }
        let stop = StopFlag()
        let accepted = state.withLock { s -> Bool in
            guard !s.shuttingDown else { return false }
            s.running[id] = stop
            s.busy[app, default: 0] += 1
            return true
        }
        guard accepted else { return false }
        defer {
            state.withLock { s in
                s.running.removeValue(forKey: id)
                s.busy[app, default: 1] -= 1
            }
        }

        let sender: any DeliverySender
        do {
            sender = try await self.sender(for: app, access: access)
        } catch {
            if let storeError = error as? DeliveryStoreError {
                // The breaker state could not be read: the database, not the credentials. Tried again later.
                logger.error("send job \(id) cannot start: \(storeError.message)", metadata: ["app": "\(app)", "job": "\(id)"])
                retry(id, app: app, after: settings.interruptedRetrySeconds)
                return true
            }
            logger.error("send job \(id) cannot start: \(error)", metadata: ["app": "\(app)", "job": "\(id)"])
            let problem = "credentials: \(error)"
            do throws(DeliveryStoreError) {
                try await access.run("recording the problem") { store throws(DeliveryStoreError) in
                    try store.noteStopped(id: id, error: problem)
                }
            } catch {
                logger.warning("send job \(id): cannot record why it did not start: \(error.message)")
            }
            return false
        }
        let broadcaster = Broadcaster(store: store, configuration: configuration, logger: logger)
        let report: BroadcastReport
        do {
            report = try await broadcaster.run(id: id, sender: sender, stop: stop)
            await retireIfReplaced(sender, app: app)
        } catch {
            await retireIfReplaced(sender, app: app)
            switch error.code {
            case .notFound:
                logger.error("send job \(id): \(error.message)", metadata: ["app": "\(app)", "job": "\(id)"])
                return false
            case .store:
                logger.error("send job \(id): \(error.message)", metadata: ["app": "\(app)", "job": "\(id)"])
                retry(id, app: app, after: settings.interruptedRetrySeconds)
                return true
            }
        }
        let counts = report.counts
        logger.info("send job \(id) \(report.record.state.rawValue): \(counts.accepted)/\(report.record.total) accepted, \(counts.deferred) deferred", metadata: ["app": "\(app)", "job": "\(id)"])
        switch report.stop {
        case .endpoint(let endpointStop) where endpointStop.kind == .outage:
            logger.error("send job \(id) interrupted: \(endpointStop.message); retrying in \(Int(settings.interruptedRetrySeconds)) s", metadata: ["app": "\(app)", "job": "\(id)"])
            retry(id, app: app, after: settings.interruptedRetrySeconds)
            return true
        case .store(let message):
            logger.error("send job \(id) interrupted: the database is unavailable (\(message)); retrying in \(Int(settings.interruptedRetrySeconds)) s", metadata: ["app": "\(app)", "job": "\(id)"])
            retry(id, app: app, after: settings.interruptedRetrySeconds)
            return true
        case .endpoint(let endpointStop):
            // The next job of this app builds a new sender, reading the credentials files again.
            let stale = state.withLock { $0.senders.removeValue(forKey: app) }
            if let stale { await stale.shutdown() }
            logger.error("send job \(id) interrupted: \(endpointStop.message); fix the credentials, then send the same request again (or restart) to resume it", metadata: ["app": "\(app)", "job": "\(id)"])
        case .leaseLost, .signal, nil:
            if report.record.state == .cancelled { logger.info("send job \(id) cancelled") }
        }
        return false
    }

    /// The app's long-lived sender, created on first use with the app's persisted breaker state.
    private func sender(for app: String, access: StoreAccess) async throws -> any DeliverySender {
        if let existing = state.withLock({ $0.senders[app] }) { return existing }
        // Thrown when unreadable: a sender never starts with its breakers reset by an outage.
        let breakers = try await access.run("reading the pruning breaker") { store throws(DeliveryStoreError) in
            try store.breakerStates(app: app)
        }
        // Reading and decrypting credentials blocks: on the process's lane, never a cooperative thread.
        let makeSender = self.makeSender
        let sender = try await BlockingLane.shared.run { try makeSender(app, breakers) }
        return state.withLock { s in
            if let raced = s.senders[app] { return raced }
            s.senders[app] = sender
            return sender
        }
    }

    /// Applies a reloaded configuration: the apps served become `apps`, and every app's long-lived sender is
    /// replaced at its next job, so new connections use the credentials and settings read now. A sender a job is
    /// using keeps sending until that job ends (its transfers finish on the old credentials), then shuts down; an
    /// idle one shuts down now.
    public func reload(apps: Set<String>) async {
        appsNow.withLock { $0 = apps }
        let idle = state.withLock { s -> [any DeliverySender] in
            var idle: [any DeliverySender] = []
            for (app, sender) in s.senders {
                if s.busy[app, default: 0] > 0 { s.retiring[app] = sender } else { idle.append(sender) }
            }
            s.senders.removeAll()
            return idle
        }
        for sender in idle { await sender.shutdown() }
    }

    /// Shuts `sender` down when a reload replaced it while this job of `app` used it.
    private func retireIfReplaced(_ sender: any DeliverySender, app: String) async {
        let retired = state.withLock { s -> (any DeliverySender)? in
            guard let old = s.retiring[app], old === sender else { return nil }
            return s.retiring.removeValue(forKey: app)
        }
        if let retired { await retired.shutdown() }
    }

    private func retry(_ id: String, app: String, after seconds: Double) {
        Task { [self] in
            try? await Task.sleep(for: .milliseconds(Int64(seconds * 1000)))
            enqueue(id, app: app)
        }
    }
}
