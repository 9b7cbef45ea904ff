import Logging
import PushCore
import Synchronization

/// What every sender does the same way, written once: the run's waiting room (retry backoff, the stopping flag), the
/// lifetime counts, the retry-or-defer rule, what a transport error means and what a dropped connection does, the stop a
/// notification carries while the run stops, and every notification's last step (counted, then handed to the
/// submitter). A sender — ``APNsSender``, ``WebPushSender``, ``FCMSender`` — adds only its request shaping, its answer
/// rule, its credentials and how it reaches its endpoints; each owns one core.
final class SenderCore: Sendable {
    let configuration: SenderConfiguration
    let metrics: SenderMetrics
    let clock: SenderClock
    let sleeper: Sleeper
    let random: @Sendable () -> Double
    let logger: Logger
    /// The backoff between answers that ask for a retry (429, 5xx).
    let backoff: BackoffPolicy
    /// The backoff between attempts to reach an unreachable endpoint.
    let reconnect: BackoffPolicy
    /// Notifications waiting out a backoff (or an access-token grant), and the run's stopping flag.
    let waiting = WaitingRoom()
    /// Counts over the sender's lifetime, endpoint stops and tripped breakers. A leaf lock: taken inside a sender's own
    /// lock, never the other way round.
    private let counts = Mutex(SendSummary())

    init(
        configuration: SenderConfiguration, metrics: SenderMetrics, clock: SenderClock, sleeper: Sleeper,
        random: @escaping @Sendable () -> Double, logger: Logger
    ) {
        self.configuration = configuration
        self.metrics = metrics
        self.clock = clock
        self.sleeper = sleeper
        self.random = random
        self.logger = logger
        backoff = BackoffPolicy(baseMs: configuration.backoffBaseMs, capMs: configuration.backoffCapMs)
        reconnect = BackoffPolicy(baseMs: configuration.reconnectBaseMs, capMs: configuration.reconnectCapMs)
    }

    /// Counts so far (over the sender's lifetime), the retries included.
    var summary: SendSummary {
        var summary = counts.withLock { $0 }
        summary.retried += waiting.retried
        return summary
    }

    /// An endpoint stopped for good (credentials, outage): it goes into ``summary``.
    func recordStop(_ stop: EndpointStop) { counts.withLock { $0.stops.append(stop) } }

    /// A pruning breaker tripped (its key): it goes into ``summary``.
    func recordBreakerTrip(_ key: String) { counts.withLock { $0.breakerTripped.append(key) } }

    /// Every notification's first step: its job, its start time, its in-flight slot.
    func start(
        _ item: SendItem, onResult: @escaping @Sendable (DeliveryResult) -> Void, onPruneReleased: (@Sendable (DeviceToken) -> Void)?
    ) -> TransferJob {
        let job = TransferJob(item, onResult: onResult, onPruneReleased: onPruneReleased)
        job.startedAtMs = clock.nowMs()
        metrics.submitted()
        return job
    }

    /// Every notification's last step: counted, its in-flight slot freed, handed to the submitter.
    func deliver(_ job: TransferJob, _ result: DeliveryResult) {
        counts.withLock { $0.count(result.kind, possiblyDuplicated: job.possiblyDuplicated) }
        metrics.finished()
        job.onResult(result)
    }

    /// The stop a notification to `endpoint` carries when it comes back unsent because the run is stopping.
    func stoppingStop(_ endpoint: String) -> EndpointStop {
        EndpointStop(.stopping, endpoint: endpoint, message: "the run is stopping")
    }

    /// The wait before the next attempt after an answer that asked for one: full jitter, never sooner than its
    /// `Retry-After`; nil when the `Retry-After` is longer than a send waits (``SenderConfiguration/maxRetryAfterMs``).
    func answerDelay(_ job: TransferJob, retryAfterMs: Int64?) -> Int? {
        backoff.delayMs(
            failedAttempts: job.attempts, random: random(), retryAfterMs: retryAfterMs, limitMs: configuration.maxRetryAfterMs)
    }

    /// The wait before the next attempt to reach an unreachable endpoint.
    func reconnectDelay(_ job: TransferJob) -> Int { reconnect.delayMs(failedAttempts: job.dropped, random: random()) }

    /// How a notification handed to ``retryOrDefer(_:endpoint:asker:delay:counts:retryAfterMs:dispatch:)`` ends now, if it does.
    struct Ending {
        var kind: DeliveryResult.Kind
        var error: String?
        var stop: EndpointStop?
    }

    /// The retry rule (``WaitingRoom/retry(_:delayMs:retryAfterMs:counts:configuration:service:sleeper:dispatch:)``):
    /// waits `delay` and dispatches again (nil back), or ends it deferred once its attempts are used up or the
    /// `Retry-After` is longer than a send waits, or unsent while the run stops. `asker` names who asked, in a
    /// deferral's error; `counts` says whether it is a retry after an answer rather than a reconnect.
    func retryOrDefer(
        _ job: TransferJob, endpoint: String, asker: String, delay: Int?, counts: Bool, retryAfterMs: Int64?,
        dispatch: @escaping @Sendable (TransferJob) -> Void
    ) -> Ending? {
        switch waiting.retry(
            job, delayMs: delay, retryAfterMs: retryAfterMs, counts: counts, configuration: configuration, service: asker,
            sleeper: sleeper, dispatch: dispatch)
        {
        case .waiting: nil
        case .deferred(let error): Ending(kind: .deferred, error: error)
        case .stopping: Ending(kind: .unsent, stop: stoppingStop(endpoint))
        }
    }

    /// What a transfer that ended without an HTTP answer means to a sender.
    enum Failure {
        /// The sender stopped the endpoint while it was queued (its transport was cancelled): unsent, with the stop.
        case endpointStopped
        /// The TLS peer or the configuration refused (``TransportFailure/refused``): stop the endpoint.
        case refused
        /// Never reached a working connection (``TransportFailure/unreachable``): the endpoint is unreachable.
        case unreachable
        /// Sent on a connection that then died (``TransportFailure/dropped``): see ``afterDrop(_:_:_:endpoint:)``.
        case dropped
    }

    /// The meaning of `error`, the transfer's failure.
    static func failure(_ error: TransportError, _ response: TransferResponse) -> Failure {
        if error.code == TransportError.endpointStopped("").code { return .endpointStopped }
        switch error.failure(sent: response.sent) {
        case .refused: return .refused
        case .unreachable: return .unreachable
        case .dropped: return .dropped
        }
    }

    /// A connection lost with the request on it: nil to resend it at once (on a new connection), else how it ends —
    /// deferred once lost ``SenderConfiguration/maxDroppedAttempts`` times, or unsent while the run stops (nothing is
    /// written again then: a request written now could reach the service after this process has gone, and after
    /// another worker took the shard over and sent it too; a resume treats it as possibly sent).
    func afterDrop(_ job: TransferJob, _ error: TransportError, _ response: TransferResponse, endpoint: String) -> Ending? {
        if let deferral = job.connectionLost(error, response, maxDropped: configuration.maxDroppedAttempts) {
            return Ending(kind: .deferred, error: deferral)
        }
        if waiting.stopping { return Ending(kind: .unsent, error: error.message, stop: stoppingStop(endpoint)) }
        return nil
    }
}
