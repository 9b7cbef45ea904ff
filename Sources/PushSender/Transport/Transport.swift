import CCurl
import Foundation
import PushCore
import PushLanes
import Synchronization

/// One endpoint connection's libcurl loop on its own thread (epoll + `curl_multi_socket_action`, ``MultiHandle``) (an endpoint has `connections` of them). Callers hand jobs in with ``submit(_:)``; results
/// come back through `onComplete` on the transport thread (keep it short: it delays every transfer).
///
/// `@unchecked Sendable`: what other threads touch is in ``inbox`` (a `Mutex`) or thread-safe (``MultiHandle/wakeup()``);
/// everything else — the waiting jobs, the handles, libcurl's multi handle, the header cache — belongs to the loop
/// thread alone.
final class Transport: @unchecked Sendable {
    let target: SenderTarget
    private let options: EasyOptions
    private let configuration: SenderConfiguration
    private let onComplete: (TransferJob, TransferResponse) -> Void
    /// The service's request shaping on this thread, for jobs that come without a ``TransferJob/prepared`` request
    /// (APNs': ``APNsRequestShape``), or nil when every job comes prepared (Web Push, FCM).
    private let shape: (any RequestShape)?

    /// What other threads and the loop share: one lock, taken by ``submit(_:)`` for every notification.
    private struct Inbox {
        /// Jobs handed in that the loop has not taken yet.
        var incoming: [TransferJob] = []
        /// When the oldest job in `incoming` was handed in (``monotonicMs()``): its hold counts from then, not from
        /// when the loop came round to it.
        var incomingSinceMs: Int64 = 0
        /// The loop sleeps in poll: a submit that is due must wake it.
        var polling = false
        /// The transfers on the wire when the loop last went to poll (``RefillCadence/wakesOnSubmit``).
        var onWire = 0
        var stopping = false
        var cancelled: TransportError?
        /// Whether the loop thread was started; whether it has ended; who waits for that.
        var started = false
        var ended = false
        var stopWaiter: CheckedContinuation<Void, Never>?
    }

    private let inbox = Mutex(Inbox())
    /// The loop thread's name, per service (`sender-apns`, `sender-webpush`, `sender-fcm`: at most 15 bytes, the
    /// kernel's limit): what `top -H` and a stack dump show. One name for all three said APNs for every service.
    private let threadName: String
    private let multi: MultiHandle

    /// `maxHostConnections` > 1 lets an HTTP/1.1 origin carry requests side by side (an HTTP/2 one still uses one
    /// connection: `CURLOPT_PIPEWAIT` waits for it to multiplex); `http1Only` and `addressCheck` go to
    /// ``EasyOptions``.
    init(
        target: SenderTarget, identity: TLSIdentity?, configuration: SenderConfiguration, metrics: SenderMetrics? = nil,
        maxHostConnections: Int = 1, http1Only: Bool = false, addressCheck: AddressCheck? = nil, threadName: String,
        shape: (any RequestShape)? = nil, onComplete: @escaping (TransferJob, TransferResponse) -> Void
    ) throws(TransportError) {
        self.threadName = threadName
        multi = try MultiHandle(
            maxConcurrentStreams: configuration.maxConcurrentStreams, maxHostConnections: maxHostConnections)
        self.target = target
        self.configuration = configuration
        self.onComplete = onComplete
        self.options = EasyOptions(
            connectTimeoutMs: configuration.connectAttemptTimeoutMs, requestTimeoutMs: configuration.requestTimeoutMs,
            upkeepIntervalMs: configuration.upkeepIntervalMs, caFile: target.caFile, identity: identity,
            connectTo: target.address.map { "\(target.host):\(target.port):\($0):\(target.port)" },
            verbose: configuration.verbose,
            route: ProxyRoute(host: target.host, configured: configuration.proxy, environment: configuration.proxyEnvironment),
            http1Only: http1Only, addressCheck: addressCheck, idHeaders: shape?.idHeaders)
        self.shape = shape
        cadence = RefillCadence(window: configuration.window, maxConcurrentStreams: configuration.maxConcurrentStreams)
        options.connections.metrics = metrics
    }

    /// Starts the loop thread.
    func start() {
        NamedThread.start(threadName) { [self] in loop() }
        inbox.withLock { $0.started = true }
    }

    /// Queues a job; wakes the loop only when it is waiting in poll and the job is due now: few transfers are on
    /// the wire, or a refill batch is complete (otherwise an answer or the hold deadline brings the loop round).
    func submit(_ job: TransferJob) {
        let wake = inbox.withLock { s in
            if s.incoming.isEmpty { s.incomingSinceMs = monotonicMs() }
            s.incoming.append(job)
            let wake = s.polling && cadence.wakesOnSubmit(handedIn: s.incoming.count, active: s.onWire)
            if wake { s.polling = false }
            return wake
        }
        if wake { multi.wakeup() }
    }

    /// Fails queued and future jobs with `error` without sending them (credentials rejected, TLS failed).
    func cancel(_ error: TransportError) {
        inbox.withLock { s in
            if s.cancelled == nil { s.cancelled = error }
        }
        multi.wakeup()
    }

    /// Lets in-flight and queued transfers finish, then ends the thread. The loop thread resumes the caller
    /// when it ends: no thread is parked waiting for it.
    func stop() async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let waits = inbox.withLock { s in
                let first = !s.stopping
                s.stopping = true
                // Not started, already ended, or another caller is already stopping it (it alone waits): return now.
                guard first, s.started, !s.ended else { return false }
                s.stopWaiter = c
                return true
            }
            if waits { multi.wakeup() } else { c.resume() }
        }
    }

    /// Jobs handed in but not yet given to libcurl (see ``admitting``).
    private var waiting = FIFO<TransferJob>()
    /// When the oldest job in ``waiting`` was taken in (``monotonicMs()``), or nil when none waits.
    private var waitingSinceMs: Int64?
    private var pool: [EasyHandle] = []
    private var active: [ObjectIdentifier: EasyHandle] = [:]

    /// How many waiting jobs libcurl may take now: all of them. libcurl keeps those beyond the server's stream
    /// limit waiting for a stream, and a request's deadline starts only when it is on the wire (``expireOverdue()``),
    /// so a wait for a stream never times out. (Handing libcurl one transfer at a time until a new connection
    /// answered, tried with the stream-limit fix, was not needed for it — StreamLimitFaultTests pass without it — and
    /// held a whole window back behind one slow first answer: BroadcasterTests' stop-while-the-window-waits.)
    private var admitting: Int { waiting.count }

    /// The refill cadence (``RefillCadence``): when ``waiting`` goes to libcurl, and when a submit wakes the loop.
    private let cadence: RefillCadence

    private func admitDue(stopping: Bool) -> Bool {
        guard let since = waitingSinceMs else { return false }
        return cadence.admitsNow(waiting: waiting.count, active: active.count, waitedMs: monotonicMs() - since, stopping: stopping)
    }

    private func loop() {
        var batch: [TransferJob] = []
        var lastUpkeepMs = SystemClock().nowMs()
        while true {
            let (batchSinceMs, stop, cancelError) = inbox.withLock { s in
                swap(&batch, &s.incoming)
                return (s.incomingSinceMs, s.stopping, s.cancelled)
            }
            if let cancelError {
                for job in waiting.removeAll() { fail(job, cancelError) }
                for job in batch { fail(job, cancelError) }
            } else if !batch.isEmpty {
                if waiting.isEmpty { waitingSinceMs = batchSinceMs }
                waiting.append(contentsOf: batch)
            }
            batch.removeAll(keepingCapacity: true)
            if admitDue(stopping: stop) { admit() }
            if waiting.isEmpty { waitingSinceMs = nil }
            if stop && active.isEmpty && waiting.isEmpty { break }
            let onWire = active.count
            let idle = inbox.withLock { s in
                let idle = s.incoming.isEmpty && !s.stopping
                s.polling = idle
                s.onWire = onWire
                return idle
            }
            // Sleeps (when nothing was handed in meanwhile) until a socket or libcurl's timer fires, a submit wakes
            // it, or the oldest request on the wire is due.
            multi.wait(maxMs: idle ? waitLimitMs() : 0)
            if idle { inbox.withLock { $0.polling = false } }
            collectFinished()
            expireOverdue()
            if active.isEmpty, let handle = pool.last {
                let now = SystemClock().nowMs()
                if now - lastUpkeepMs >= Int64(configuration.upkeepIntervalMs) {
                    handle.upkeep()
                    lastUpkeepMs = now
                }
            }
        }
        pool.removeAll()
        let waiter = inbox.withLock { s in
            s.ended = true
            defer { s.stopWaiter = nil }
            return s.stopWaiter
        }
        waiter?.resume()
    }

    /// How long the loop may sleep: until the oldest request on the wire times out or a waiting job's hold ends, at
    /// most a second (upkeep).
    private func waitLimitMs() -> Int {
        var limit = active.isEmpty ? min(configuration.upkeepIntervalMs, 1000) : 1000
        if let since = waitingSinceMs { limit = min(limit, max(0, Int(since + cadence.holdMs - monotonicMs()))) }
        // A submit need not wake the loop with a batch's worth on the wire: a job handed in then waits at most this
        // long for the loop to come round, even when no answer comes (a server holding its answers).
        if !cadence.wakesOnSubmit(handedIn: 1, active: active.count) { limit = min(limit, Int(cadence.holdMs)) }
        if let (_, sentAt) = options.sent.first {
            limit = min(limit, max(0, Int(sentAt + Int64(options.requestTimeoutMs) - monotonicMs())))
        }
        return limit
    }

    private func fail(_ job: TransferJob, _ error: TransportError) {
        onComplete(job, TransferResponse(status: 0, body: [], usedHTTP2: true, uploadedBytes: 0, sent: false, error: error))
    }

    /// Hands libcurl the waiting jobs it may take (``admitting``).
    private func admit() {
        var n = admitting
        while n > 0, let job = waiting.popFirst() {
            n -= 1
            do throws(TransportError) {
                let handle: EasyHandle
                if let pooled = pool.popLast() { handle = pooled } else { handle = try EasyHandle(options) }
                do throws(TransportError) {
                    try prepare(handle, job)
                    try multi.add(handle)
                } catch {
                    handle.job = nil
                    pool.append(handle)
                    throw error
                }
                active[ObjectIdentifier(handle)] = handle
            } catch {
                fail(job, error)
            }
        }
    }

    /// Hands every finished transfer to `onComplete`.
    private func collectFinished() {
        while let (handle, error) = multi.nextDone() {
            multi.remove(handle)
            active[ObjectIdentifier(handle)] = nil
            guard let job = handle.job else { continue }
            handle.job = nil
            let status = handle.responseCode
            let sent = handle.reachedConnection
            let response = TransferResponse(
                status: status, notificationId: handle.notificationId, uniqueId: handle.uniqueId, retryAfter: handle.retryAfter, body: handle.body,
                usedHTTP2: error != nil || handle.usedHTTP2, uploadedBytes: handle.uploadedBytes,
                sent: sent, error: error)
            if handle.renewIfConnectionsChanged() { pool.append(handle) }
            onComplete(job, response)
        }
    }

    /// Fails the transfers whose request has been on the wire for the request timeout without an answer
    /// (oldest first: ``SentTransfers`` is in sending order, so this stops at the first one still in time).
    private func expireOverdue() {
        let now = monotonicMs()
        let timeout = Int64(options.requestTimeoutMs)
        while let (handle, sentAt) = options.sent.first {
            // Finished, re-armed, or sent again (a newer entry follows): this entry is stale.
            guard handle.job != nil, handle.sentAtMs == sentAt else { options.sent.removeFirst(); continue }
            guard sentAt + timeout <= now else { break }
            options.sent.removeFirst()
            guard let job = handle.job else { continue }
            multi.remove(handle)
            active[ObjectIdentifier(handle)] = nil
            handle.job = nil
            let error = TransportError(
                code: Int(CURLE_OPERATION_TIMEDOUT.rawValue),
                message: "no answer \(options.requestTimeoutMs) ms after the request was sent")
            let response = TransferResponse(
                status: 0, body: [], usedHTTP2: true, uploadedBytes: handle.uploadedBytes, sent: true, error: error)
            if handle.renew() { pool.append(handle) }
            onComplete(job, response)
        }
    }

    private func prepare(_ handle: EasyHandle, _ job: TransferJob) throws(TransportError) {
        handle.job = job
        if let prepared = job.prepared {
            try handle.prepare(url: prepared.url, id: nil, headers: prepared.headers, body: prepared.body)
            return
        }
        guard let shape else {
            throw TransportError(code: 0, message: "no request prepared for this transfer, and the transport has no shape")
        }
        try shape.prepare(handle, job)
    }
}
