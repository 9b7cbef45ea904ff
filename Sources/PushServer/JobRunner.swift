import Foundation
import Logging
import PushCore
import PushSender
import PushStore

/// Runs accepted send jobs one at a time with the broadcast engine. Jobs live in the database, so a job
/// accepted before a crash or restart is resumed (not restarted: finished devices are skipped) when the
/// server starts again. On shutdown the running job stops taking devices, drains, and checkpoints.
final class JobRunner: Sendable {
    private let configuration: PushConfiguration
    private let registry: Registry
    private let logger: Logger
    private let stop = StopFlag()
    private let continuation: AsyncStream<String>.Continuation
    private let worker: Task<Void, Never>
    /// How long to wait before retrying a job whose app lease another process (a cron broadcast) holds.
    static let leaseRetrySeconds = 5.0

    init(configuration: PushConfiguration, registry: Registry, logger: Logger) {
        self.configuration = configuration
        self.registry = registry
        self.logger = logger
        let (stream, continuation) = AsyncStream<String>.makeStream()
        self.continuation = continuation
        let stop = stop
        worker = Task {
            for await id in stream {
                if stop.isRaised { break }
                await Self.run(id: id, configuration: configuration, registry: registry, logger: logger, stop: stop,
                               requeue: { continuation.yield($0) })
            }
        }
    }

    /// Queues a job that is already stored.
    func enqueue(_ id: String) { continuation.yield(id) }

    /// Queues every unfinished job of a configured app (after a restart).
    func resumeUnfinished() {
        let unfinished = (try? registry.broadcasts(states: [.pending, .running, .interrupted])) ?? []
        for record in unfinished where configuration.apps[record.app] != nil {
            logger.info("resuming send job \(record.id) (\(record.state.rawValue))")
            enqueue(record.id)
        }
    }

    /// Stops the running job at a checkpoint and waits for it.
    func shutdown() async {
        stop.raise(SIGTERM)
        continuation.finish()
        await worker.value
    }

    private static func run(
        id: String, configuration: PushConfiguration, registry: Registry, logger: Logger, stop: StopFlag,
        requeue: @escaping @Sendable (String) -> Void
    ) async {
        guard let record = try? registry.broadcast(id: id), record.state != .completed, record.state != .failed,
            let app = configuration.apps[record.app]
        else { return }
        let broadcaster = Broadcaster(registry: registry, bundleId: app.topic, logger: logger)
        do {
            let report = try await broadcaster.run(id: id, stop: stop) { sink in
                try Sender.forApp(app, in: configuration, sink: sink, settings: .init())
            }
            logger.info("send job \(id) \(report.record.state.rawValue): \(report.counts.accepted)/\(report.record.total) accepted")
        } catch let error as BroadcastError {
            if case .running(let other) = error.code, !stop.isRaised {
                logger.info("send job \(id) waits: broadcast \(other) holds the \(record.app) lease")
                Task {
                    try? await Task.sleep(for: .seconds(leaseRetrySeconds))
                    requeue(id)
                }
                return
            }
            logger.error("send job \(id): \(error.message)")
        } catch {
            // Credentials that cannot be loaded or an expired certificate: the job cannot run as configured.
            logger.error("send job \(id) failed: \(error)")
            try? registry.updateBroadcast(id: id, state: .failed, error: "\(error)")
        }
    }
}
