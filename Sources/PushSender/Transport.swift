import CCurl
import Foundation
import PushCore
import PushLanes

/// One endpoint connection's libcurl loop on its own thread (epoll + `curl_multi_socket_action`, ``MultiHandle``) (an endpoint has `connections` of them). Callers hand jobs in with ``submit(_:)``; results
/// come back through `onComplete` on the transport thread (keep it short: it delays every transfer).
final class Transport: @unchecked Sendable {
    let target: SenderTarget
    private let options: EasyOptions
    private let configuration: SenderConfiguration
    private let onComplete: (TransferJob, TransferResponse) -> Void
    private let urlPrefix: String

    private let lock = NSLock()
    private var incoming: [TransferJob] = []
    /// Guarded by `lock`: when the oldest job in `incoming` was handed in (``monotonicMs()``): its hold counts from
    /// then, not from when the loop came round to it.
    private var incomingSinceMs: Int64 = 0
    private var polling = false
    /// Guarded by `lock`: the transfers on the wire when the loop last went to poll (``RefillCadence/wakesOnSubmit``).
    private var onWire = 0
    private var stopping = false
    private var cancelled: TransportError?
    private let multi: MultiHandle
    /// Guarded by `lock`: the loop thread, once started; whether it has ended; who waits for that.
    private var thread: Thread?
    private var ended = false
    private var stopWaiter: CheckedContinuation<Void, Never>?

    /// `maxHostConnections` > 1 lets an HTTP/1.1 origin carry requests side by side (an HTTP/2 one still uses one
    /// connection: `CURLOPT_PIPEWAIT` waits for it to multiplex); `http1Only` and `addressCheck` go to
    /// ``EasyOptions``.
    init(
        target: SenderTarget, identity: TLSIdentity?, configuration: SenderConfiguration, metrics: SenderMetrics? = nil,
        maxHostConnections: Int = 1, http1Only: Bool = false, addressCheck: AddressCheck? = nil,
        onComplete: @escaping (TransferJob, TransferResponse) -> Void
    ) throws(TransportError) {
        multi = try MultiHandle(
            maxConcurrentStreams: configuration.maxConcurrentStreams, maxHostConnections: maxHostConnections)
        self.target = target
        self.configuration = configuration
        self.onComplete = onComplete
        self.options = EasyOptions(
            connectTimeoutMs: configuration.connectAttemptTimeoutMs, requestTimeoutMs: configuration.requestTimeoutMs,
            upkeepIntervalMs: configuration.upkeepIntervalMs, caFile: target.caFile, identity: identity,
            connectTo: target.address.map { "\(target.host):\(target.port):\($0):\(target.port)" },
            verbose: configuration.verbose, proxy: configuration.proxy, http1Only: http1Only, addressCheck: addressCheck)
        urlPrefix = target.description + "/3/device/"
        cadence = RefillCadence(window: configuration.window, maxConcurrentStreams: configuration.maxConcurrentStreams)
        options.connections.metrics = metrics
    }

    /// Starts the loop thread.
    func start() {
        let started = NamedThread.start("pushctl-apns") { [self] in loop() }
        lock.lock()
        thread = started
        lock.unlock()
    }

    /// Queues a job; wakes the loop only when it is waiting in poll and the job is due now: few transfers are on
    /// the wire, or a refill batch is complete (otherwise an answer or the hold deadline brings the loop round).
    func submit(_ job: TransferJob) {
        lock.lock()
        if incoming.isEmpty { incomingSinceMs = monotonicMs() }
        incoming.append(job)
        let wake = polling && cadence.wakesOnSubmit(handedIn: incoming.count, active: onWire)
        if wake { polling = false }
        lock.unlock()
        if wake { multi.wakeup() }
    }

    /// Fails queued and future jobs with `error` without sending them (credentials rejected, TLS failed).
    func cancel(_ error: TransportError) {
        lock.lock()
        if cancelled == nil { cancelled = error }
        lock.unlock()
        multi.wakeup()
    }

    /// Lets in-flight and queued transfers finish, then ends the thread. The loop thread resumes the caller
    /// when it ends: no thread is parked waiting for it.
    func stop() async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            lock.lock()
            let first = !stopping
            stopping = true
            // Not started, already ended, or another caller is already stopping it (it alone waits): return now.
            guard first, thread != nil, !ended else {
                lock.unlock()
                c.resume()
                return
            }
            stopWaiter = c
            lock.unlock()
            multi.wakeup()
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
            lock.lock()
            swap(&batch, &incoming)
            let batchSinceMs = incomingSinceMs
            let stop = stopping
            let cancelError = cancelled
            lock.unlock()
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
            lock.lock()
            let idle = incoming.isEmpty && !stopping
            polling = idle
            onWire = active.count
            lock.unlock()
            // Sleeps (when nothing was handed in meanwhile) until a socket or libcurl's timer fires, a submit wakes
            // it, or the oldest request on the wire is due.
            multi.wait(maxMs: idle ? waitLimitMs() : 0)
            if idle {
                lock.lock()
                polling = false
                lock.unlock()
            }
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
        lock.lock()
        ended = true
        let waiter = stopWaiter
        stopWaiter = nil
        lock.unlock()
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
                status: status, apnsId: handle.apnsId, uniqueId: handle.uniqueId, retryAfter: handle.retryAfter, body: handle.body,
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
            try handle.prepare(url: prepared.url, apnsId: nil, headers: prepared.headers, body: prepared.body)
            return
        }
        let request = job.item.request
        try handle.prepare(
            url: urlPrefix + request.token.hex, apnsId: request.apnsId, headers: sharedHeaders(request, job.authorization),
            body: request.payload)
    }

    /// What the headers of a request other than its apns-id depend on.
    private struct HeaderKey: Hashable {
        var pushType: String
        var priority: Int
        var topic: String
        var expiration: Int64?
        var collapseId: String?
        var authorization: String?
    }

    /// Header lists shared by the requests that have them in common (a broadcast's all do), built once; used on
    /// the transport thread only. Handles keep the list of their current request alive, so the cache may drop
    /// its lists at any time: it starts over past 32 of them (tokens rotate, send jobs differ).
    private var headerCache: [HeaderKey: HeaderList] = [:]
    /// The last list handed out and its key: consecutive requests of a broadcast share it, and comparing their
    /// strings (the same storage, so one pointer compare each) costs less than hashing them for the cache.
    private var lastHeaders: (key: HeaderKey, list: HeaderList)?

    private func sharedHeaders(_ request: NotificationRequest, _ authorization: String?) -> HeaderList {
        let key = HeaderKey(
            pushType: request.pushType.rawValue, priority: Int(request.priority.rawValue), topic: request.topic,
            expiration: request.expiration, collapseId: request.collapseId, authorization: authorization)
        if let last = lastHeaders, last.key == key { return last.list }
        if let cached = headerCache[key] {
            lastHeaders = (key, cached)
            return cached
        }
        let headers = HeaderList()
        headers.append("apns-push-type: " + key.pushType)
        headers.append("apns-priority: " + String(key.priority))
        headers.append("apns-topic: " + key.topic)
        if let expiration = key.expiration { headers.append("apns-expiration: " + String(expiration)) }
        if let collapseId = key.collapseId { headers.append("apns-collapse-id: " + collapseId) }
        if let authorization { headers.append("authorization: " + authorization) }
        headers.append("content-type: application/json")
        headers.append("Expect:")
        if headerCache.count >= 32 { headerCache.removeAll(keepingCapacity: true) }
        headerCache[key] = headers
        lastHeaders = (key, headers)
        return headers
    }
}
