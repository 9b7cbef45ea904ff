import PushCore

/// Moves notifications from a source through two windows into the sender, and their results into the
/// committer — the loop broadcasts, send jobs and `pushctl send` share. A device takes a slot of each window
/// before it is read: the *in-flight* slot comes back at its answer, so over a long round trip the link stays
/// full (its rate reaches in-flight ÷ RTT); the *ahead* slot comes back only once its outcome is committed and,
/// in a broadcast's main pass, behind the checkpoint (``OutcomeCommitter``), so a slow store holds the sender
/// back instead of losing outcomes and the ahead window bounds what a crash can make the next claim send again.
struct DeliveryPump {
    let sender: any DeliverySender
    let inFlight: BatchWindow
    let ahead: BatchWindow
    let committer: OutcomeCommitter
    let stop: StopFlag

    /// The windows for a sender: in flight, its configured window (``SenderConfiguration/inFlightLimit``), refilled
    /// once a thirty-second of it came back (over a long round trip the link stays nearly full: 100 ms away, a
    /// quarter made one connection send 77% of window ÷ RTT, a thirty-second 90%); ahead, twice that
    /// (answered but not yet committed, or committed past the checkpoint, the other half).
    static func windows(for sender: any DeliverySender) -> (inFlight: BatchWindow, ahead: BatchWindow) {
        let limit = sender.inFlightLimit
        return (BatchWindow(limit: limit, resumeAfter: max(1, limit / 32)), BatchWindow(limit: 2 * limit))
    }

    /// One notification, its sequence number (the checkpoint tracker's, else any distinct number), and whether
    /// an earlier run may already have sent it.
    struct Step {
        var item: SendItem
        var seq: Int
        var maybeSentBefore: Bool
    }

    /// Sends what `next` yields until it ends or the run stops, then drains: notifications waiting for an
    /// unreachable endpoint or a backoff come back unsent at once, requests on the wire finish, and every
    /// result is committed. A store failure or an endpoint stop raises `stop`.
    func run(_ next: () async throws(DeliveryStoreError) -> Step?) async {
        // The loop checks the flag between devices, but with the window full and no answers coming (a host that
        // lost its link) it waits in `acquire` and would not see it: the watcher acts on a stop at once — waiting
        // notifications come back, nothing lost on the wire is written again (``APNsSender/abandonWaiting(_:)``), and
        // the windows open so the loop wakes, sees the flag and drains.
        let watcher = Task { [stop, sender, inFlight, ahead] in
            while !Task.isCancelled {
                if let reason = stop.reason {
                    sender.abandonWaiting(reason.description)
                    inFlight.open()
                    ahead.open()
                    return
                }
                try? await Task.sleep(for: .milliseconds(100))
            }
        }
        defer { watcher.cancel() }
        while true {
            if !ahead.tryAcquire() { await ahead.acquire() }
            if !inFlight.tryAcquire() { await inFlight.acquire() }
            if stop.isRaised {
                inFlight.release()
                ahead.release()
                break
            }
            let step: Step?
            do throws(DeliveryStoreError) {
                step = try await next()
            } catch {
                stop.raise(StopReason(error))
                inFlight.release()
                ahead.release()
                break
            }
            guard let step else {
                inFlight.release()
                ahead.release()
                break
            }
            let (committer, stop, inFlight, maybeSent, seq) = (committer, stop, inFlight, step.maybeSentBefore, step.seq)
            sender.submit(
                step.item,
                onResult: { result in
                    if result.kind == .unsent, let endpointStop = result.stop, endpointStop.kind != .stopping {
                        stop.raise(.endpoint(endpointStop))
                    }
                    // A copy only to mark it: copying every result cost ~200 instructions per device (callgrind).
                    if maybeSent {
                        var marked = result
                        marked.possiblyDuplicated = true
                        committer.add(marked, seq: seq)
                    } else {
                        committer.add(result, seq: seq)
                    }
                    inFlight.release()
                },
                onPruneReleased: { committer.releasePrune($0) })
        }
        if let reason = stop.reason { sender.abandonWaiting(reason.description) }
        committer.flushEagerly()
        await inFlight.drain()
        if let failure = await committer.finish() { stop.raise(StopReason(failure)) }
    }
}

extension StopReason {
    /// The stop a store failure means: fenced out, or the database unavailable.
    init(_ error: DeliveryStoreError) {
        self = error.code == .leaseLost ? .leaseLost(error.message) : .store(error.message)
    }
}
