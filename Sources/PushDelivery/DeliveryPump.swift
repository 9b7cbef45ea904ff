import PushCore
import PushSender

/// Moves notifications from a source through the window into the sender, and their results into the
/// committer — the loop broadcasts, send jobs and `pushctl send` share. A slot is taken before the next
/// device is read and given back only once its outcome is committed.
struct DeliveryPump {
    let sender: Sender
    let window: BatchWindow
    let committer: OutcomeCommitter
    let stop: StopFlag

    /// One notification, and whether an earlier run may already have sent it.
    struct Step {
        var item: SendItem
        var maybeSentBefore: Bool
    }

    /// Sends what `next` yields until it ends or the run stops, then drains: notifications waiting for an
    /// unreachable endpoint or a backoff come back unsent at once, requests on the wire finish, and every
    /// result is committed. A store failure or an endpoint stop raises `stop`.
    func run(_ next: () async throws(DeliveryStoreError) -> Step?) async {
        while true {
            await window.acquire()
            if stop.isRaised {
                window.release()
                break
            }
            let step: Step?
            do throws(DeliveryStoreError) {
                step = try await next()
            } catch {
                stop.raise(StopReason(error))
                window.release()
                break
            }
            guard let step else {
                window.release()
                break
            }
            let (committer, stop, maybeSent) = (committer, stop, step.maybeSentBefore)
            sender.submit(
                step.item,
                onResult: { result in
                    var result = result
                    if maybeSent { result.possiblyDuplicated = true }
                    if result.kind == .unsent, let endpointStop = result.stop, endpointStop.kind != .stopping {
                        stop.raise(.endpoint(endpointStop))
                    }
                    committer.add(result)
                },
                onPruneReleased: { committer.releasePrune($0) })
        }
        if let reason = stop.reason { sender.abandonWaiting(reason.description) }
        committer.flushEagerly()
        await window.drain()
        if let failure = await committer.finish() { stop.raise(StopReason(failure)) }
    }
}

extension StopReason {
    /// The stop a store failure means: fenced out, or the database unavailable.
    init(_ error: DeliveryStoreError) {
        self = error.code == .leaseLost ? .leaseLost(error.message) : .store(error.message)
    }
}
