import Foundation
import Logging
import PushCore
import PushLanes
import Synchronization

/// Delivers the store's webhook outbox: for each app with a webhook, leases a batch of due events, POSTs them
/// as one signed JSON request, deletes them on a 2xx answer and otherwise makes them due again after a backoff
/// (doubling from ``Settings/firstRetryMs`` to ``Settings/maxRetryMs``; events are never dropped). It runs on
/// its own thread, so a slow or dead receiver never holds up delivery: the engine only writes outbox rows, in
/// the transaction of the outcome that caused them. Several processes may run one each; a lease keeps a batch
/// with one of them, so a receiver may see an event twice only when a process dies after posting (de-duplicate
/// by event `id`).
public final class WebhookDispatcher: Sendable {
    /// Batching and timing.
    public struct Settings: Sendable {
        /// Events per request.
        public var batchSize = 100
        /// How long a posting process keeps a batch from the others.
        public var leaseMs: Int64 = 60_000
        /// How often an idle dispatcher looks at the outbox.
        public var idlePollMs = 1000
        /// Delay after the first failed attempt…
        public var firstRetryMs: Int64 = 1000
        /// …doubling up to this (half of each delay random: ``backoff``).
        public var maxRetryMs: Int64 = 600_000
        /// Uniform in [0, 1): the backoff's jitter.
        public var random: @Sendable () -> Double = { Double.random(in: 0..<1) }

        /// The retry delays: equal jitter, so the processes posting one app's events do not retry in step.
        var backoff: BackoffPolicy { BackoffPolicy(baseMs: Int(firstRetryMs), capMs: Int(maxRetryMs), jitter: 0.5) }
        /// The defaults.
        public init() {}
    }

    private let store: DeliveryStore
    private let clients: [String: any WebhookPoster]
    private let settings: Settings
    private let logger: Logger
    /// (started, stopping)
    private let state = Mutex((started: false, stopping: false))
    private let wake = DispatchSemaphore(value: 0)
    /// Signalled as the thread's last act: ``stop()`` awaits it without parking a thread.
    private let finished = ThreadEnd()

    /// A dispatcher for the apps in `clients` (app id → its webhook).
    public init(store: DeliveryStore, clients: [String: any WebhookPoster], settings: Settings = .init(), logger: Logger) {
        self.store = store
        self.clients = clients
        self.settings = settings
        self.logger = logger
    }

    /// The apps it posts for.
    public var apps: [String] { clients.keys.sorted() }

    /// Starts the dispatching thread (once).
    public func start() {
        let first = state.withLock { s -> Bool in
            guard !s.started, !s.stopping, !clients.isEmpty else { return false }
            s.started = true
            return true
        }
        guard first else { return }
        NamedThread.start("pushctl-webhook") { [self] in
            loop()
            finished.signal()
        }
    }

    /// Stops after the request in progress (if any) and waits for the thread.
    public func stop() async {
        let running = state.withLock { s -> Bool in
            let running = s.started && !s.stopping
            s.stopping = true
            return running
        }
        guard running else { return }
        wake.signal()
        await finished.wait()
    }

    private var isStopping: Bool { state.withLock { $0.stopping } }

    private func loop() {
        while !isStopping {
            var busy = false
            for app in apps where !isStopping {
                if deliverBatch(app: app) > 0 { busy = true }
            }
            if busy { continue }
            _ = wake.wait(timeout: .now() + .milliseconds(settings.idlePollMs))
        }
    }

    /// Leases one batch of `app`'s due events and posts it. Returns how many were delivered (0 when none was
    /// due, the store was unavailable or the post failed). Blocking.
    @discardableResult
    public func deliverBatch(app: String) -> Int {
        guard let client = clients[app] else { return 0 }
        let events: [WebhookEvent]
        do { events = try store.claimWebhookEvents(app: app, limit: settings.batchSize, leaseMs: settings.leaseMs) } catch {
            logger.warning("webhook outbox unavailable", metadata: ["app": "\(app)", "error": "\(error.message)"])
            return 0
        }
        guard let first = events.first, let last = events.last else { return 0 }
        let body = JSONValue.object([("app", .string(app)), ("events", .array(events.map(\.json)))]).encoded
        let delivery = "\(app)-\(first.id)-\(last.id)"
        let timestamp = Int64(Date().timeIntervalSince1970)
        let ids = events.map(\.id)
        let problem: String
        do {
            let status = try client.post(body, timestamp: timestamp, delivery: delivery)
            if (200..<300).contains(status) {
                do { try store.deleteWebhookEvents(ids: ids) } catch {
                    // They stay leased, then due again: the receiver sees them twice (it de-duplicates by id).
                    logger.warning("webhook events delivered but not removed", metadata: ["app": "\(app)", "error": "\(error.message)"])
                }
                logger.debug("webhook delivered", metadata: ["app": "\(app)", "events": "\(events.count)", "status": "\(status)"])
                return events.count
            }
            problem = "HTTP \(status)"
        } catch {
            problem = "\(error)"
        }
        let attempts = events.map(\.attempts).max() ?? 0
        let delay = Int64(settings.backoff.delayMs(failedAttempts: attempts + 1, random: settings.random()))
        logger.warning("webhook failed; retrying", metadata: [
            "app": "\(app)", "url": "\(client.url)", "events": "\(events.count)", "attempt": "\(attempts + 1)",
            "problem": "\(problem)", "retryInMs": "\(delay)",
        ])
        do { try store.retryWebhookEvents(ids: ids, afterMs: delay) } catch {
            // Their lease runs out instead, and then they are due again.
            logger.warning("webhook retry not recorded", metadata: ["app": "\(app)", "error": "\(error.message)"])
        }
        return 0
    }
}
