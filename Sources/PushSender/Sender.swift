import Foundation
import Logging
import PushCore

/// Sends notifications to APNs over HTTP/2 (libcurl multi, one loop thread per endpoint), applying Apple's
/// response rules: retries with backoff and the same apns-id, pruning of dead tokens behind a breaker, and
/// stopping an endpoint that rejects our credentials. Call ``shutdown()`` when done.
public final class Sender: @unchecked Sendable {
    /// The settings in use.
    public let configuration: SenderConfiguration
    let credentials: CredentialProvider
    let clock: SenderClock
    let sleeper: Sleeper
    let random: @Sendable () -> Double
    let logger: Logger
    let backoff: BackoffPolicy
    let recorder: DeliveryRecorder
    private let identity: TLSIdentity?
    private let primary: SenderTarget
    private let byEnvironment: [APNsEnvironment: SenderTarget]

    let lock = NSLock()
    private var endpoints: [SenderTarget: EndpointState] = [:]
    var summaryStorage = SendSummary()

    /// Creates a sender for `target`; `byEnvironment` routes items whose environment is known (Apple's hosts).
    /// Refuses an expired client certificate before any connection, naming the expiry date.
    public init(
        target: SenderTarget, byEnvironment: [APNsEnvironment: SenderTarget] = [:],
        credentials: CredentialProvider, configuration: SenderConfiguration = .init(),
        sink: DeliverySink? = nil, certificateNotAfterMs: Int64? = nil,
        clock: SenderClock = SystemClock(), sleeper: Sleeper = TaskSleeper(),
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
        logger: Logger = Logger(label: "PushSender")
    ) throws(SenderError) {
        if let notAfter = certificateNotAfterMs, notAfter <= clock.nowMs() {
            throw SenderError(.certificateExpired, "client certificate expired on \(Self.formatDate(notAfter)); renew it in Apple's developer portal")
        }
        guard CurlGlobal.initialized else { throw SenderError(.transport, "curl_global_init failed") }
        self.primary = target
        self.byEnvironment = byEnvironment
        self.credentials = credentials
        self.configuration = configuration
        self.clock = clock
        self.sleeper = sleeper
        self.random = random
        self.logger = logger
        self.identity = credentials.tlsIdentity
        backoff = BackoffPolicy(baseMs: configuration.backoffBaseMs, capMs: configuration.backoffCapMs)
        recorder = DeliveryRecorder(sink: sink, batchSize: configuration.recordBatchSize, logger: logger)
    }

    /// Creates a sender for an app's configured endpoint; with Apple's endpoints, items carrying their
    /// token's environment go to the production or sandbox host accordingly. The app's own settings
    /// (``SenderConfiguration/applying(_:)``) override `configuration`.
    public convenience init(
        app: AppSettings, simulator: SimulatorSettings?, credentials: CredentialProvider,
        configuration: SenderConfiguration = .init(), sink: DeliverySink? = nil, certificateNotAfterMs: Int64? = nil,
        logger: Logger = Logger(label: "PushSender")
    ) throws(SenderError) {
        let target = SenderTarget.forEndpoint(app.endpoint, caFile: app.caFile, simulator: simulator)
        var routes: [APNsEnvironment: SenderTarget] = [:]
        if app.endpoint == .production || app.endpoint == .development {
            routes[.production] = SenderTarget.forEndpoint(.production, caFile: app.caFile, simulator: nil)
            routes[.development] = SenderTarget.forEndpoint(.development, caFile: app.caFile, simulator: nil)
        }
        try self.init(
            target: target, byEnvironment: routes, credentials: credentials, configuration: configuration.applying(app),
            sink: sink, certificateNotAfterMs: certificateNotAfterMs, logger: logger)
    }

    /// Sends one notification and waits for its final outcome (retries included).
    public func send(_ request: NotificationRequest, environment: APNsEnvironment? = nil) async -> DeliveryResult {
        await withCheckedContinuation { (c: CheckedContinuation<DeliveryResult, Never>) in
            start(TransferJob(SendItem(request, environment: environment)) { c.resume(returning: $0) })
        }
    }

    /// Sends a stream of notifications with at most ``SenderConfiguration/window`` in flight, so memory
    /// stays flat for any number of devices. `onResult` runs once per notification on a transport thread:
    /// keep it short. Returns when every notification has its final outcome.
    public func run<S: Sequence>(
        _ items: S, onResult: @escaping @Sendable (DeliveryResult) -> Void
    ) async where S.Element == SendItem {
        let window = BatchWindow(limit: configuration.window)
        let completion: @Sendable (DeliveryResult) -> Void = { result in
            onResult(result)
            window.release()
        }
        for item in items {
            await window.acquire()
            start(TransferJob(item, completion: completion))
        }
        await window.drain()
    }

    /// ``run(_:onResult:)`` for requests without environment routing.
    public func run<S: Sequence>(
        requests: S, onResult: @escaping @Sendable (DeliveryResult) -> Void
    ) async where S.Element == NotificationRequest {
        await run(requests.lazy.map { SendItem($0) }, onResult: onResult)
    }

    /// ``run(_:onResult:)`` for an asynchronous source (e.g. keyset pages from the registry); the source
    /// is only asked for the next item when the window has room (back-pressure). Ends early if it throws.
    public func run<S: AsyncSequence>(
        stream items: S, onResult: @escaping @Sendable (DeliveryResult) -> Void
    ) async throws where S.Element == SendItem {
        let window = BatchWindow(limit: configuration.window)
        let completion: @Sendable (DeliveryResult) -> Void = { result in
            onResult(result)
            window.release()
        }
        do {
            for try await item in items {
                await window.acquire()
                start(TransferJob(item, completion: completion))
            }
        } catch {
            await window.drain()
            throw error
        }
        await window.drain()
    }

    /// Counts so far.
    public var summary: SendSummary {
        lock.lock()
        defer { lock.unlock() }
        return summaryStorage
    }

    /// Waits for in-flight work, applies held-back prunes (unless a breaker tripped), flushes the delivery
    /// log and stops the transport threads.
    public func shutdown() async {
        for state in endpointStates() {
            await state.transport?.stop()
            flushHeldPrunes(state, force: true)
        }
        await recorder.flush()
    }

    private func endpointStates() -> [EndpointState] {
        lock.lock()
        defer { lock.unlock() }
        return Array(endpoints.values)
    }

    /// The endpoint for an item: its environment's host when routing applies, else the configured one.
    func endpoint(for environment: APNsEnvironment?) -> EndpointState {
        let target = environment.flatMap { byEnvironment[$0] } ?? primary
        lock.lock()
        defer { lock.unlock() }
        if let state = endpoints[target] { return state }
        let state = EndpointState(target: target, configuration: configuration)
        do {
            let transport = try Transport(target: target, identity: identity, configuration: configuration) {
                [unowned self, unowned state] job, response in
                self.handle(job, response, state)
            }
            transport.start()
            state.transport = transport
        } catch {
            state.stopped = "cannot set up curl for \(target): \(error.message)"
        }
        endpoints[target] = state
        return state
    }

    /// Starts (or restarts, for a retry) one attempt.
    func start(_ job: TransferJob) {
        if job.attempts == 0 { job.startedAtMs = clock.nowMs() }
        let state = endpoint(for: job.item.environment)
        lock.lock()
        let stopped = state.stopped
        lock.unlock()
        if let stopped {
            finish(job, status: 0, reason: nil, kind: .notSent, error: stopped)
            return
        }
        do {
            job.authorization = try credentials.authorizationHeader()
        } catch {
            finish(job, status: 0, reason: nil, kind: .notSent, error: "credentials: \(error)")
            return
        }
        job.attempts += 1
        state.transport?.submit(job)
    }

    static func formatDate(_ ms: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: Date(timeIntervalSince1970: Double(ms) / 1000))
    }
}

/// Per-endpoint state; mutable fields are guarded by the sender's lock.
final class EndpointState: @unchecked Sendable {
    let target: SenderTarget
    var transport: Transport?
    var breaker: PruningBreaker
    var breakerReported = false
    var stopped: String?
    /// BadDeviceToken prunes held until the breaker is confident the endpoint is healthy.
    var heldPrunes: [DeviceToken] = []

    init(target: SenderTarget, configuration: SenderConfiguration) {
        self.target = target
        breaker = PruningBreaker(
            consecutive: configuration.breakerConsecutive, ratio: configuration.breakerRatio,
            minimumAnswers: configuration.breakerMinimumAnswers)
    }
}
