import Foundation
import PushCore
import PushStore

/// Tracks which dispatched tokens have a recorded outcome. Tokens are dispatched in key order, so the
/// checkpoint — every token up to it is final — is the end of the longest recorded prefix.
final class CheckpointTracker: @unchecked Sendable {
    private let lock = NSLock()
    private var dispatched: [String] = []
    private var head = 0
    private var recorded = Set<String>()

    private var last = ""

    /// Notes tokens handed to the sender, in key order.
    func dispatch(_ token: String) {
        lock.lock()
        dispatched.append(token)
        last = token
        lock.unlock()
    }

    /// The last token actually handed to the sender ("" if none).
    var lastDispatched: String {
        lock.lock()
        defer { lock.unlock() }
        return last
    }

    /// Notes recorded outcomes and returns the new checkpoint, or nil when it did not move.
    func record(_ tokens: [String]) -> String? {
        lock.lock()
        defer { lock.unlock() }
        recorded.formUnion(tokens)
        var moved: String?
        while head < dispatched.count, recorded.remove(dispatched[head]) != nil {
            moved = dispatched[head]
            head += 1
        }
        if head > 4096 && head * 2 > dispatched.count {
            dispatched.removeFirst(head)
            head = 0
        }
        return moved
    }

    /// Tokens dispatched but not yet recorded.
    var inFlight: Int {
        lock.lock()
        defer { lock.unlock() }
        return dispatched.count - head
    }
}

/// The sender's delivery sink during a broadcast: each batch of final outcomes is committed together with
/// its delivery-log rows and the advanced checkpoint in one transaction.
struct BroadcastSink: DeliverySink {
    let registry: Registry
    let app: String
    let broadcastId: String
    let tracker: CheckpointTracker
    /// Tokens ≤ this were dispatched by an interrupted run without a recorded outcome: sending them again
    /// may deliver twice, so their outcomes are flagged.
    let resumedThrough: String

    func record(_ results: [DeliveryResult]) throws {
        var outcomes: [BroadcastOutcome] = []
        var deliveries: [DeliveryRecord] = []
        outcomes.reserveCapacity(results.count)
        deliveries.reserveCapacity(results.count)
        for r in results {
            let duplicated = r.possiblyDuplicated || (!resumedThrough.isEmpty && r.token.hex <= resumedThrough)
            let reason = r.reason?.rawValue ?? r.error
            outcomes.append(BroadcastOutcome(
                token: r.token, kind: r.kind.rawValue, status: r.status, reason: reason, attempts: r.attempts,
                pruned: r.pruned, possiblyDuplicated: duplicated))
            deliveries.append(DeliveryRecord(
                app: app, apnsId: r.apnsId, uniqueId: r.uniqueId, token: r.token, status: r.status, reason: reason,
                attempts: r.attempts, possiblyDuplicated: duplicated, firstAttemptMs: r.startedAtMs,
                finishedMs: r.finishedAtMs))
        }
        let checkpoint = tracker.record(results.map(\.token.hex))
        try registry.recordBroadcastOutcomes(id: broadcastId, outcomes: outcomes, deliveries: deliveries, checkpoint: checkpoint)
        let accepted = results.filter { $0.kind == .accepted }
        if let last = accepted.last {
            try registry.markSuccess(app: app, tokens: accepted.map(\.token), atMs: last.finishedAtMs)
        }
    }

    func prune(token: DeviceToken, reason: APNsReason, apnsTimestampMs: Int64?) throws -> Bool {
        try registry.prune(app: app, token: token, reason: reason, apnsTimestampMs: apnsTimestampMs) == .deleted
    }
}
