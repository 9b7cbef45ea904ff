import Foundation
import Logging
import PushCore

extension APNsSender {
    /// Sends `job` (a first attempt or a retry) to its endpoint, parks it while the endpoint is unreachable,
    /// or finishes it unsent when the endpoint has stopped.
    func dispatch(_ job: TransferJob) {
        let target = target(for: job.item.environment)
        enum Step {
            case send(Transport)
            case unsent(EndpointStop)
            case parked(scheduleProbe: Bool)
        }
        // Every notification passes here: the endpoint's state is changed in place (no copy of it, one lookup).
        func step(_ e: inout EndpointState) -> Step {
            if let stop = e.stop { return .unsent(stop) }
            if let outage = e.outage, outage.probe !== job {
                if waiting.stopping { return .unsent(stoppingStop(target)) }
                return .parked(scheduleProbe: park(job, in: &e))
            }
            guard !e.transports.isEmpty else { return .unsent(stoppingStop(target)) }
            let transport = e.transports[e.dispatched % e.transports.count]
            e.dispatched &+= 1
            return .send(transport)
        }
        let step = shared.withLock { s -> Step in
            // One hash of the target when the endpoint exists (a lookup hashes its host: ~330 instructions).
            var index = s.endpoints.index(forKey: target)
            if index == nil {
                _ = endpointState(target, in: &s)
                index = s.endpoints.index(forKey: target)
            }
            return step(&s.endpoints.values[index!])
        }
        switch step {
        case .send(let transport):
            do {
                job.authorization = try credentials.authorizationHeader()
            } catch {
                let stop = stopEndpoint(target, .credentials, "credentials for \(target) cannot be used: \(error)")
                finish(job, status: 0, reason: nil, kind: .unsent, stop: stop)
                return
            }
            job.attemptStartedNs = DispatchTime.now().uptimeNanoseconds
            transport.submit(job)
        case .unsent(let stop):
            finish(job, status: 0, reason: nil, kind: .unsent, stop: stop)
        case .parked(let schedule):
            if schedule { scheduleProbe(target) }
        }
    }

    /// The endpoint's state, created (with its transport thread) the first time it is needed.
    private func endpointState(_ target: SenderTarget, in s: inout Shared) -> EndpointState {
        if let e = s.endpoints[target] { return e }
        let breaker = PruningBreaker(
            consecutive: configuration.breakerConsecutive, ratio: configuration.breakerRatio,
            minimumAnswers: configuration.breakerMinimumAnswers,
            state: s.storedBreakers[target.description] ?? .init())
        var stop: EndpointStop?
        var transports: [Transport] = []
        do {
            for _ in 0..<configuration.connections {
                transports.append(
                    try Transport(
                        target: target, identity: identity, configuration: configuration, metrics: metrics, threadName: "sender-apns",
                        shape: APNsRequestShape(target: target), runs: core.waiting
                    ) {
                        [unowned self] job, response in
                        self.handle(job, response, target)
                    })
            }
            for t in transports { t.start() }
        } catch {
            transports = []
            stop = EndpointStop(.credentials, endpoint: target.description, message: "cannot set up curl for \(target): \(error.message)")
        }
        let e = EndpointState(target: target, transports: transports, breaker: breaker, stop: stop)
        s.endpoints[target] = e
        return e
    }

    /// Parks `job` until the endpoint is back; true when the caller must schedule the reconnect probe.
    private func park(_ job: TransferJob, in e: inout EndpointState) -> Bool {
        e.parked.append(job)
        guard var outage = e.outage, outage.probe == nil, !outage.probeScheduled else { return false }
        outage.probeScheduled = true
        e.outage = outage
        return true
    }

    /// The stop an endpoint's notification carries when it comes back unsent because the run is stopping.
    func stoppingStop(_ target: SenderTarget) -> EndpointStop { core.stoppingStop(target.description) }

    /// How much earlier than its connect timeout libcurl may end an attempt (its timer is not ours).
    static var timerSlackMs: Int64 { 100 }

    /// A request to `target` never reached a working connection (DNS, refused or reset TCP, TLS handshake cut
    /// short, connect timeout). The endpoint is unreachable: the job waits, one probe reconnects with backoff,
    /// and only once the outage is older than the limit does the endpoint stop.
    func endpointUnreachable(_ job: TransferJob, _ target: SenderTarget, _ error: String) {
        enum Step {
            case parked(scheduleProbe: Bool, first: Bool)
            case unsent(EndpointStop)
            case stopped([TransferJob], EndpointStop)
        }
        let now = clock.nowMs()
        // The endpoint has been unreachable since the failed attempt began, not since its failure came back (a
        // connect timeout reports it seconds later).
        let attemptMs = job.attemptStartedNs > 0 ? Int64((DispatchTime.now().uptimeNanoseconds &- job.attemptStartedNs) / 1_000_000) : 0
        let limitMs = configuration.outageLimitMs
        // A connect attempt is cut to the limit (``SenderConfiguration/connectAttemptTimeoutMs``), and libcurl's timer
        // may fire a few milliseconds before ours says the limit passed: an attempt that timed out there took the
        // whole limit, or a first one would wait for a second (a 5 s limit stopping after 10 s).
        let connectMs = Int64(configuration.connectAttemptTimeoutMs)
        let attemptTookTheLimit = connectMs >= Int64(limitMs) && attemptMs + Self.timerSlackMs >= connectMs
        let step = shared.withLock { s -> Step in
            guard var e = s.endpoints[target] else { return .unsent(stoppingStop(target)) }
            if let stop = e.stop { return .unsent(stop) }
            var first = false
            var decides = false
            if var outage = e.outage {
                if outage.probe === job {
                    outage.probe = nil
                    outage.failures += 1
                    outage.lastError = error
                    decides = true
                }
                e.outage = outage
            } else {
                e.outage = EndpointState.Outage(sinceMs: now - max(0, attemptMs), failures: 1, lastError: error)
                first = true
                decides = true
            }
            // The probe's failure (or a first failure that already took the whole limit) decides whether to wait on.
            if decides, let outage = e.outage, now - outage.sinceMs >= Int64(limitMs) || attemptTookTheLimit {
                let seconds = (now - outage.sinceMs + 500) / 1000
                let stop = EndpointStop(
                    .outage, endpoint: target.description,
                    message: "APNs at \(target) unreachable for \(seconds) s (outage limit \(limitMs / 1000) s): \(error)")
                e.stop = stop
                e.outage = nil
                let jobs = e.parked + [job]
                e.parked.removeAll()
                core.recordStop(stop)
                s.endpoints[target] = e
                return .stopped(jobs, stop)
            }
            if waiting.stopping {
                s.endpoints[target] = e
                return .unsent(stoppingStop(target))
            }
            let schedule = park(job, in: &e)
            s.endpoints[target] = e
            return .parked(scheduleProbe: schedule, first: first)
        }
        switch step {
        case .parked(let schedule, let first):
            if first {
                logger.warning(
                    "APNs unreachable; notifications wait while the sender reconnects with backoff",
                    metadata: ["endpoint": "\(target)", "error": "\(error)", "outageLimitSeconds": "\(limitMs / 1000)"])
            }
            if schedule { scheduleProbe(target) }
        case .unsent(let stop):
            finish(job, status: 0, reason: nil, kind: .unsent, error: error, stop: stop)
        case .stopped(let jobs, let stop):
            logger.error("stopping endpoint", metadata: ["endpoint": "\(target)", "reason": "\(stop.message)"])
            for j in jobs { finish(j, status: 0, reason: nil, kind: .unsent, error: j === job ? error : nil, stop: stop) }
        }
    }

    /// Sleeps the reconnect backoff (equal jitter: never less than half the ceiling), then sends one parked
    /// notification as the probe.
    func scheduleProbe(_ target: SenderTarget) {
        let failures = shared.withLock { $0.endpoints[target]?.outage?.failures ?? 1 }
        let ceiling = reconnect.delayMs(failedAttempts: failures, random: 1)
        let delay = ceiling / 2 + Int(Double(ceiling / 2) * min(max(random(), 0), 1))
        let sleeper = sleeper
        Task { [self] in
            await sleeper.sleep(milliseconds: delay)
            let probe = shared.withLock { s -> TransferJob? in
                guard var e = s.endpoints[target], var outage = e.outage, e.stop == nil else { return nil }
                outage.probeScheduled = false
                if !e.parked.isEmpty {
                    outage.probe = e.parked.removeFirst()
                }
                e.outage = outage
                s.endpoints[target] = e
                return outage.probe
            }
            if let probe { dispatch(probe) }
        }
    }

    /// True when `job` is the reconnect probe of `target`.
    func isProbe(_ job: TransferJob, _ target: SenderTarget) -> Bool {
        shared.withLock { $0.endpoints[target]?.outage?.probe === job }
    }

    /// Stops an endpoint for good (credentials, TLS): parked and queued notifications come back unsent, and
    /// so does everything sent to it later. Returns the stop in force (the first one wins).
    @discardableResult
    func stopEndpoint(_ target: SenderTarget, _ kind: EndpointStop.Kind, _ message: String) -> EndpointStop {
        let (stop, first, parked, transports) = shared.withLock { s -> (EndpointStop, Bool, [TransferJob], [Transport]) in
            guard var e = s.endpoints[target] else {
                return (EndpointStop(kind, endpoint: target.description, message: message), false, [], [])
            }
            if let existing = e.stop { return (existing, false, [], []) }
            let stop = EndpointStop(kind, endpoint: target.description, message: message)
            e.stop = stop
            e.outage = nil
            let parked = e.parked
            e.parked.removeAll()
            core.recordStop(stop)
            s.endpoints[target] = e
            return (stop, true, parked, e.transports)
        }
        if first {
            logger.error("stopping endpoint", metadata: ["endpoint": "\(target)", "reason": "\(message)"])
            for transport in transports { transport.cancel(TransportError.endpointStopped(message)) }
        }
        for job in parked { finish(job, status: 0, reason: nil, kind: .unsent, stop: stop) }
        return stop
    }

    /// Logs a tripped breaker once.
    func reportBreaker(_ target: SenderTarget, discarded: Int) {
        logger.critical(
            "pruning breaker tripped: too many BadDeviceToken answers; BadDeviceToken tokens are kept, not deleted. Check the app's endpoint/environment (sandbox vs production).",
            metadata: ["endpoint": "\(target)", "heldPrunesDiscarded": "\(discarded)"])
    }
}
