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
        shape: (any RequestShape)? = nil, runs: WaitingRoom? = nil,
        onComplete: @escaping (TransferJob, TransferResponse) -> Void
    ) throws(TransportError) {
        self.runs = runs
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
        self.http1Only = http1Only
        self.maxHostConnections = maxHostConnections
        multi.keepAlive = options.connections
        cadence = RefillCadence(window: configuration.window, maxConcurrentStreams: configuration.maxConcurrentStreams)
        reads = ReadCadence(requestTimeoutMs: configuration.requestTimeoutMs)
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

    /// How many waiting jobs libcurl may take now. Once the connection has answered: all of them. libcurl keeps those
    /// beyond the server's stream limit waiting for a stream (nghttp2 opens a stream only under the limit the server's
    /// last SETTINGS gave, lowered or raised), and a request's deadline starts only when it is on the wire
    /// (``expireOverdue()``), so a wait for a stream never times out.
    ///
    /// Until then — no connection open, or a new one opened since the last answer — one at a time: the
    /// new-connection gate. nghttp2 assumes 100 concurrent streams until the server's first SETTINGS arrives, and
    /// libcurl sends every transfer it holds on a new HTTP/2 connection at once, before that SETTINGS can arrive: a
    /// server whose limit is lower meets a burst of streams over it (RFC 9113 §5.1.2) and may refuse them, reset them
    /// with PROTOCOL_ERROR (not safe to resend, §8.7) or close the connection with every request on it (Python's
    /// `h2`; issue 57). The server sends its SETTINGS before any answer, so by the first answer libcurl knows the
    /// limit: one request alone on a new connection never exceeds one (pushy waits for the initial SETTINGS; APNs
    /// starts connections low). The gate costs one round trip per new connection.
    ///
    /// How the transport knows, on every libcurl (7.88 has no `CURLINFO_CONN_ID`): ``ConnectionCounter`` counts the
    /// sockets libcurl opens (socket-options callback) and closes (close-socket callback). The gate closes when none is
    /// open (the next transfer opens one) or one was opened since the last confirmation; it lets one transfer — the
    /// probe — into libcurl once none is there (``active`` empty: none can pull libcurl into another connection
    /// meanwhile), and the probe's answer confirms the connection it used. HTTP/1.1 has no streams to exceed: an origin
    /// that answered over HTTP/1.1 (or a transport that speaks nothing else) has no gate.
    ///
    /// What it costs: a new connection carries one request for its first round trip; a reconnect while transfers are
    /// on the old connection waits for them to end before its probe. What it does not cover: transfers libcurl
    /// already holds when it opens a connection by itself (it resends those above a GOAWAY's last-stream-id, or
    /// refused, on a new connection) — with the gate such a connection carries what was in flight, not the window.
    /// (This gate was tried once before and dropped because a first answer that never came held the window back in
    /// the transport, where a stop could not reach it: BroadcastThroughTheSenderTests' stop tests. Now a stop brings
    /// the gated jobs back unsent, ``releaseGatedIfStopping()``.)
    private var admitting: Int {
        guard gated else { return waiting.count }
        return active.isEmpty ? 1 : 0
    }

    /// Whether the new-connection gate holds transfers back (see ``admitting``).
    private var gated: Bool {
        if http1Only || answeredOverHTTP1 { return false }
        let connections = options.connections
        return connections.open <= 0 || connections.opened != confirmedAtOpened
    }

    /// The socket count (``ConnectionCounter/opened``) when the current connection answered its probe; -1: never.
    private var confirmedAtOpened = -1
    /// The handle carrying the gate's probe, if one is in libcurl.
    private var probe: EasyHandle?
    /// No HTTP/2 (``EasyOptions/http1Only``).
    private let http1Only: Bool
    /// `CURLMOPT_MAX_HOST_CONNECTIONS` now: 1 once the origin answered over HTTP/2 (``confirm(_:probe:)``).
    private var maxHostConnections: Int
    /// The origin answered over HTTP/1.1: it has no stream limit, so no gate.
    private var answeredOverHTTP1 = false
    /// The sender's run state: while its run stops, the jobs the gate holds come back unsent (never written: a
    /// request written after the stop could reach the service after another worker sent it too). Nil: they wait for
    /// the probe's answer or its timeout, then go.
    private let runs: WaitingRoom?

    /// Fails the jobs the gate holds with ``TransportError/endpointStopped(_:)`` (unsent) once the run stops.
    private func releaseGatedIfStopping() {
        guard !waiting.isEmpty, gated, let runs, runs.stopping else { return }
        let error = TransportError.endpointStopped("the run is stopping; not sent (waiting for a new connection's first answer)")
        for job in waiting.removeAll() { fail(job, error) }
    }

    /// The refill cadence (``RefillCadence``): when ``waiting`` goes to libcurl, and when a submit wakes the loop.
    private let cadence: RefillCadence

    private func admitDue(stopping: Bool) -> Bool {
        guard let since = waitingSinceMs, admitting > 0 else { return false }
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
            releaseGatedIfStopping()
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
            let read = multi.wait(maxMs: idle ? waitLimitMs() : 0, holdReadsMs: holdsReads ? reads.holdMs : 0)
            if idle { inbox.withLock { $0.polling = false } }
            let finished = collectFinished()
            if read { reads.passed(finished: finished, active: onWire) }
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
        // A gated wait (``admitting`` 0) ends with the probe's answer, not with the hold.
        if let since = waitingSinceMs, admitting > 0 { limit = min(limit, max(0, Int(since + cadence.holdMs - monotonicMs()))) }
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
        let probing = gated
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
                if probing { probe = handle }
            } catch {
                fail(job, error)
            }
        }
    }

    /// The answer cadence (``ReadCadence``): how long a readable connection waits before libcurl reads it.
    private var reads: ReadCadence
    /// Whether reads may be held: an HTTP/2 connection carries every transfer of this transport (over HTTP/1.1 each
    /// socket has one transfer, and a pass costs one).
    private var holdsReads: Bool { !http1Only && !answeredOverHTTP1 }

    /// Hands every finished transfer to `onComplete`; how many finished.
    private func collectFinished() -> Int {
        var finished = 0
        let now = monotonicMs()
        while let (handle, error) = multi.nextDone() {
            finished += 1
            multi.remove(handle)
            active[ObjectIdentifier(handle)] = nil
            let wasProbe = probe === handle
            if wasProbe { probe = nil }
            guard let job = handle.job else { continue }
            handle.job = nil
            let status = handle.responseCode
            if error == nil, status > 0 {
                confirm(handle, probe: wasProbe)
                if handle.sentAtMs > 0 { reads.answered(roundTripMs: now - handle.sentAtMs, nowMs: now) }
            }
            let sent = handle.reachedConnection
            let response = TransferResponse(
                status: status, notificationId: handle.notificationId, uniqueId: handle.uniqueId, retryAfter: handle.retryAfter, body: handle.body,
                usedHTTP2: error != nil || handle.usedHTTP2, uploadedBytes: handle.uploadedBytes,
                sent: sent, error: error)
            if handle.renewIfConnectionsChanged() { pool.append(handle) }
            onComplete(job, response)
        }
        return finished
    }

    /// An answer arrived on `handle`: over HTTP/1.1 the origin needs no gate; the probe's answer over HTTP/2 confirms
    /// its connection, whose SETTINGS libcurl has read by now (a server sends them before anything else).
    private func confirm(_ handle: EasyHandle, probe wasProbe: Bool) {
        if !handle.usedHTTP2 {
            answeredOverHTTP1 = true
            return
        }
        if maxHostConnections > 1 {
            // An HTTP/2 origin needs one connection. Beyond it libcurl 8 opens another when the first is at the
            // server's stream limit — a new connection the gate would only see once libcurl had already sent it
            // every transfer waiting (up to 100 streams before its SETTINGS).
            maxHostConnections = 1
            multi.setMaxHostConnections(1)
        }
        if wasProbe, options.connections.open > 0 { confirmedAtOpened = options.connections.opened }
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
            if probe === handle { probe = nil }
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
