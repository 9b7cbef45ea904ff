import Dispatch
import PushCore
import Synchronization

/// The notifications a sender holds back between attempts — waiting out a retry backoff (every sender: ``APNsSender``,
/// ``WebPushSender``, ``FCMSender``), a reconnect backoff or an access-token grant (the latter two) — and the run's
/// stopping flag, with the one retry rule they share: a notification is retried after its backoff unless its attempts
/// are used up or the service's `Retry-After` is longer than a send waits (then it is deferred), and while the run
/// stops it comes back unsent instead of waiting. Callbacks never run while the lock is held.
final class WaitingRoom: Sendable {
    private struct State {
        var waiting: [ObjectIdentifier: TransferJob] = [:]
        /// Set by ``abandonAll()`` until the next ``beginRun()``.
        var stopping = false
        /// Retries scheduled after an answer (not reconnects).
        var retried = 0
    }

    private let state = Mutex(State())

    /// What became of a notification handed to ``retry(_:delayMs:retryAfterMs:counts:configuration:service:sleeper:dispatch:)``.
    enum Next {
        /// Waiting; `dispatch` runs after the delay unless the run stops first.
        case waiting
        /// Not retried: finish it deferred, with this error (nil: its last one).
        case deferred(String?)
        /// The run is stopping: finish it unsent.
        case stopping
    }

    /// True while the run stops (``abandonAll()`` was called).
    var stopping: Bool { state.withLock { $0.stopping } }

    /// Retries scheduled so far (for ``SendSummary/retried``).
    var retried: Int { state.withLock { $0.retried } }

    /// Holds `job` until ``release(_:)``; false (and not held) while the run stops.
    func park(_ job: TransferJob, countsAsRetry: Bool = false) -> Bool {
        state.withLock { s in
            if s.stopping { return false }
            if countsAsRetry { s.retried += 1 }
            s.waiting[ObjectIdentifier(job)] = job
            return true
        }
    }

    /// Takes `job` back; false when ``abandonAll()`` took it first (it was finished there).
    func release(_ job: TransferJob) -> Bool {
        state.withLock { $0.waiting.removeValue(forKey: ObjectIdentifier(job)) != nil }
    }

    /// The run stops: every waiting notification, for the caller to finish unsent.
    func abandonAll() -> [TransferJob] {
        state.withLock { s in
            s.stopping = true
            defer { s.waiting.removeAll() }
            return Array(s.waiting.values)
        }
    }

    /// A new run begins.
    func beginRun() { state.withLock { $0.stopping = false } }

    /// The retry rule: `delayMs` is the backoff's wait (nil when the `Retry-After` is longer than a send waits);
    /// `service` names who asked, in the deferral's error. `counts` says whether it is a retry after an answer
    /// (counted in ``retried``) rather than a reconnect.
    func retry(
        _ job: TransferJob, delayMs: Int?, retryAfterMs: Int64?, counts: Bool, configuration: SenderConfiguration,
        service: String, sleeper: Sleeper, dispatch: @escaping @Sendable (TransferJob) -> Void
    ) -> Next {
        guard job.attempts < configuration.maxAttempts else { return .deferred(nil) }
        guard let delayMs else {
            return .deferred(
                "\(service) asked to retry after \((retryAfterMs ?? 0) / 1000) s (Retry-After), longer than the \(configuration.maxRetryAfterMs / 1000) s a send waits")
        }
        guard park(job, countsAsRetry: counts) else { return .stopping }
        Task { [self] in
            await sleeper.sleep(milliseconds: delayMs)
            if release(job) { dispatch(job) }
        }
        return .waiting
    }
}

extension TransferJob {
    /// Hands this prepared request to `transport` with its attempt's headers and credential.
    func send(on transport: Transport, headers: HeaderList, authorization: String) {
        prepared?.headers = headers
        self.authorization = authorization
        attemptStartedNs = DispatchTime.now().uptimeNanoseconds
        transport.submit(self)
    }

    /// Its request may have been processed if its body left us, or if it timed out unanswered: flagged possibly duplicated.
    func lostOnTheWire(_ error: TransportError, _ response: TransferResponse) {
        if response.uploadedBytes > 0 || error.isTimeout { possiblyDuplicated = true }
    }

    /// Its connection was lost with the request on it: it may have been processed if its body left us (or if it timed
    /// out unanswered). Returns the deferral's error once it has been lost `maxDropped` times, else nil (resend it,
    /// unless the run is stopping).
    func connectionLost(_ error: TransportError, _ response: TransferResponse, maxDropped: Int) -> String? {
        lostOnTheWire(error, response)
        dropped += 1
        return dropped >= maxDropped ? "connection lost \(dropped) times: \(error.message)" : nil
    }

    /// This notification's result: its attempts, duplicates and timing, the error of a deferred or unsent one
    /// defaulting to its last transport error (and a status-0 refusal's to its reason).
    func result(
        status: Int, reason: String?, kind: DeliveryResult.Kind, prune: PruneDecision, error: String?, stop: EndpointStop?,
        service: PushService, finishedAtMs: Int64
    ) -> DeliveryResult {
        DeliveryResult(
            token: item.request.token, notificationId: item.request.notificationId, status: status, reason: reason.map(APNsReason.init(rawValue:)),
            kind: kind, prune: prune, attempts: attempts, possiblyDuplicated: possiblyDuplicated, startedAtMs: startedAtMs,
            finishedAtMs: finishedAtMs,
            error: error ?? (kind == .deferred || kind == .unsent ? lastError : (status == 0 ? reason : nil)), stop: stop,
            service: service)
    }
}
