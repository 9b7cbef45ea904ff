import Foundation
import PushCore
import Synchronization

/// A push service in memory, behind the engine's only seam (``DeliverySender``): no TLS, no transport, no
/// simulator, no service's wire rules. It answers each item on a thread of its own, as a transport does, by a rule per
/// token that a test may change between runs, and remembers every request it accepted — what the engine's tests
/// need to prove the engine's promises (each device handed over once per pass, outcomes and prunes committed, counts
/// exact, resumes, leases) whatever service is behind the seam. What only a real sender does (retries, breakers,
/// stream limits, TLS) is tested with the senders and the simulator, in SendPathTests and PushSenderTests.
final class FakeService: DeliverySender {
    /// How the service answers one device.
    enum Answer: Sendable, Equatable {
        /// Delivered.
        case accept
        /// The device is gone: the engine prunes it under the service's reason `reason`, gated on `timestampMs` (the
        /// service's evidence of when it went away) when given.
        case gone(reason: String = "Unregistered", timestampMs: Int64? = nil)
        /// A permanent refusal under `reason`.
        case reject(String)
        /// Not delivered this time (the service said "later"): deferred under `reason`.
        case later(String)
    }

    let inFlightLimit: Int
    let metrics = SenderMetrics()
    /// The service's pace: each answer is released this long after the previous one, in order, on the service's one
    /// thread (0: at once).
    private let answerDelay: Duration
    private let queue = DispatchQueue(label: "fake-service")

    /// What the service accepted, shared by the services of one test (a run after another, as one server sees).
    let log: ReceivedLog
    private let rules: Rules

    private struct State {
        var submitted: [DeviceToken] = []
        var summary = SendSummary()
    }

    /// The requests a service accepted, in order: the fake's part of what the simulator's record is to a sender test.
    final class ReceivedLog: Sendable {
        private let requests = Mutex([NotificationRequest]())
        func append(_ request: NotificationRequest) { requests.withLock { $0.append(request) } }
        var all: [NotificationRequest] { requests.withLock { $0 } }
    }

    /// How devices are answered, shared like the log and changeable between runs (a server that stops throttling).
    final class Rules: Sendable {
        private let rule: Mutex<@Sendable (DeviceToken) -> Answer>
        init(_ rule: @escaping @Sendable (DeviceToken) -> Answer = { _ in .accept }) { self.rule = Mutex(rule) }
        func set(_ rule: @escaping @Sendable (DeviceToken) -> Answer) { self.rule.withLock { $0 = rule } }
        func answer(_ token: DeviceToken) -> Answer { rule.withLock { $0 }(token) }
    }

    private let state = Mutex(State())

    init(inFlightLimit: Int = 500, answerDelay: Duration = .zero, log: ReceivedLog = ReceivedLog(), rules: Rules = Rules()) {
        self.inFlightLimit = inFlightLimit
        self.answerDelay = answerDelay
        self.log = log
        self.rules = rules
    }

    /// The devices handed over to this service so far, in order, whatever their answer.
    var submitted: [DeviceToken] { state.withLock { $0.submitted } }

    var summary: SendSummary { state.withLock { $0.summary } }
    var breakerStates: [String: PruningBreaker.State] { [:] }
    var trippedEndpoints: [String] { [] }
    var endpointConditions: [EndpointCondition] { [] }

    func submit(
        _ item: SendItem, onResult: @escaping @Sendable (DeliveryResult) -> Void,
        onPruneReleased: (@Sendable (DeviceToken) -> Void)?
    ) {
        let request = item.request
        let answer = rules.answer(request.token)
        if answer == .accept { log.append(request) }
        state.withLock { s in
            s.submitted.append(request.token)
            s.summary.finished += 1
            if answer == .accept { s.summary.accepted += 1 }
        }
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        func result(_ status: Int, _ kind: DeliveryResult.Kind, _ reason: String? = nil, prune: PruneDecision = .none, timestampMs: Int64? = nil)
            -> DeliveryResult
        {
            DeliveryResult(
                token: request.token, notificationId: request.notificationId, status: status,
                reason: reason.map(APNsReason.init(rawValue:)), kind: kind, prune: prune, attempts: 1,
                apnsTimestampMs: timestampMs, startedAtMs: now, finishedAtMs: now, service: item.service)
        }
        let answered: DeliveryResult = switch answer {
        case .accept: result(200, .accepted)
        case .gone(let reason, nil):
            result(410, .tokenDead, reason, prune: .delete(PruneRequest(service: reason, status: 410)))
        case .gone(let reason, let timestampMs?):
            // Gated on the service's evidence, as the store gates APNs' 410 timestamp.
            result(410, .tokenDead, reason, prune: .delete(PruneRequest(
                reason: APNsReason(rawValue: reason), status: 410, apnsTimestampMs: timestampMs)), timestampMs: timestampMs)
        case .reject(let reason): result(400, .rejected, reason)
        case .later(let reason): result(503, .deferred, reason)
        }
        let delay = answerDelay
        queue.async {
            // The service's own thread, never the cooperative pool: a pace of answers, like a server's.
            if delay > .zero { Thread.sleep(forTimeInterval: Double(delay.components.attoseconds) / 1e18 + Double(delay.components.seconds)) }
            onResult(answered)
        }
    }

    func beginRun() {}
    func abandonWaiting(_ reason: String) {}
    func endRun() -> Int { 0 }
    /// Waits until every answer scheduled so far was delivered.
    func shutdown() async { await withCheckedContinuation { c in queue.async { c.resume() } } }
}
