import Foundation
import PushCore
import PushLanes

/// One HTTP/2 connection's curl multi loop on its own thread (an endpoint has `connections` of them). Callers hand jobs in with ``submit(_:)``; results
/// come back through `onComplete` on the transport thread (keep it short: it delays every transfer).
final class Transport: @unchecked Sendable {
    let target: SenderTarget
    private let options: EasyOptions
    private let configuration: SenderConfiguration
    private let onComplete: (TransferJob, TransferResponse) -> Void
    private let urlPrefix: String

    private let lock = NSLock()
    private var incoming: [TransferJob] = []
    private var polling = false
    private var stopping = false
    private var cancelled: TransportError?
    private let multi: MultiHandle
    private let finished = DispatchSemaphore(value: 0)
    private var thread: Thread?

    init(
        target: SenderTarget, identity: TLSIdentity?, configuration: SenderConfiguration, metrics: SenderMetrics? = nil,
        onComplete: @escaping (TransferJob, TransferResponse) -> Void
    ) throws(TransportError) {
        multi = try MultiHandle(
            maxConcurrentStreams: configuration.maxConcurrentStreams, maxHostConnections: 1)
        self.target = target
        self.configuration = configuration
        self.onComplete = onComplete
        self.options = EasyOptions(
            connectTimeoutMs: configuration.connectAttemptTimeoutMs, requestTimeoutMs: configuration.requestTimeoutMs,
            upkeepIntervalMs: configuration.upkeepIntervalMs, caFile: target.caFile, identity: identity,
            connectTo: target.address.map { "\(target.host):\(target.port):\($0):\(target.port)" },
            verbose: configuration.verbose, proxy: configuration.proxy)
        urlPrefix = target.description + "/3/device/"
        options.connections.metrics = metrics
    }

    /// Starts the loop thread.
    func start() {
        thread = NamedThread.start("pushctl-apns") { [self] in loop() }
    }

    /// Queues a job; wakes the loop only when it is waiting in poll.
    func submit(_ job: TransferJob) {
        lock.lock()
        incoming.append(job)
        let wake = polling
        polling = false
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

    /// Lets in-flight and queued transfers finish, then ends the thread.
    func stop() async {
        guard markStopping(), thread != nil else { return }
        multi.wakeup()
        let finished = finished
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async { finished.wait(); c.resume() }
        }
    }

    /// Sets the stop flag; false when already stopping.
    private func markStopping() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        let first = !stopping
        stopping = true
        return first
    }

    private func loop() {
        var pool: [EasyHandle] = []
        var active: [ObjectIdentifier: EasyHandle] = [:]
        var batch: [TransferJob] = []
        var lastUpkeepMs = SystemClock().nowMs()
        while true {
            lock.lock()
            swap(&batch, &incoming)
            let stop = stopping
            let cancelError = cancelled
            lock.unlock()
            for job in batch {
                if let cancelError {
                    onComplete(job, TransferResponse(status: 0, body: [], usedHTTP2: true, uploadedBytes: 0, sent: false, error: cancelError))
                    continue
                }
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
                    onComplete(job, TransferResponse(status: 0, body: [], usedHTTP2: true, uploadedBytes: 0, sent: false, error: error))
                }
            }
            batch.removeAll(keepingCapacity: true)
            if stop && active.isEmpty { break }
            do { try multi.perform() } catch { /* only out-of-memory style failures; poll again */ }
            while let (handle, error) = multi.nextDone() {
                multi.remove(handle)
                active[ObjectIdentifier(handle)] = nil
                guard let job = handle.job else { continue }
                handle.job = nil
                let response = TransferResponse(
                    status: handle.responseCode, apnsId: handle.apnsId, uniqueId: handle.uniqueId, body: handle.body,
                    usedHTTP2: error != nil || handle.usedHTTP2, uploadedBytes: handle.uploadedBytes,
                    sent: handle.reachedConnection, error: error)
                if handle.renewIfConnectionsChanged() { pool.append(handle) }
                onComplete(job, response)
            }
            lock.lock()
            let idle = incoming.isEmpty && !stopping
            polling = idle
            lock.unlock()
            if idle {
                try? multi.poll(timeoutMs: active.isEmpty ? min(configuration.upkeepIntervalMs, 1000) : 100)
                lock.lock()
                polling = false
                lock.unlock()
            }
            if active.isEmpty, let handle = pool.last {
                let now = SystemClock().nowMs()
                if now - lastUpkeepMs >= Int64(configuration.upkeepIntervalMs) {
                    handle.upkeep()
                    lastUpkeepMs = now
                }
            }
        }
        pool.removeAll()
        finished.signal()
    }

    private func prepare(_ handle: EasyHandle, _ job: TransferJob) throws(TransportError) {
        let request = job.item.request
        handle.job = job
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
