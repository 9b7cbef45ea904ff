import PushCore
import Synchronization

/// The main pass's bookkeeping between the shard's checkpoint and the last device handed to the sender.
///
/// Devices are handed over in key order, each with a sequence number. The checkpoint — a resume starts after
/// it — is the end of the longest prefix of settled devices: an outcome committed for it, or a row of its own
/// that the next claim works from. An accepted device writes no row, so it is counted only when the checkpoint
/// passes it: a device past the checkpoint is sent again after a crash and must not be counted twice.
///
/// A device that is not answered promptly — in a retry's backoff, parked for an unreachable endpoint, slow on
/// the wire — would hold the checkpoint back while later devices settle, and a crash would resend all of them.
/// So once `holdAfter` devices after it have settled, it is *held*: the commit writes it a pending row (possibly
/// sent) and the checkpoint passes it; its answer later replaces the row (or, accepted, removes it and is
/// counted at once). The engine releases a device's slot of the "ahead" window (``Plan/released``) only once it
/// is committed and behind the checkpoint, so every device a crash could make the next claim send again — past
/// the checkpoint, or held — holds a slot: that window's size bounds them.
///
/// Used from the committer's thread (``commit(_:)``) and the feed (``dispatch(_:hasRow:)``).
final class CheckpointTracker: Sendable {
    /// One answer as the committer sees it.
    struct Answer {
        /// The device's sequence number (from ``dispatch(_:hasRow:)``).
        var seq: Int
        var kind: DeliveryOutcome.Kind
        var retried: Bool
        var possiblyDuplicated: Bool
    }

    /// What one commit writes for the checkpoint.
    struct Plan {
        /// The new checkpoint, when it moved.
        var checkpoint: String?
        /// Accepted devices to count in this commit.
        var accepted = AcceptedTally()
        /// Devices still waiting that get a pending row, so the checkpoint can pass them.
        var held: [DeviceToken] = []
        /// For each answer (in order), whether the broadcast may hold a row for its device.
        var mayHaveRow: [Bool] = []
        /// Slots of the ahead window this commit frees (devices now committed and behind the checkpoint).
        var released = 0
    }

    private enum Slot: Equatable {
        case waiting
        case accepted(retried: Bool, possiblyDuplicated: Bool)
        case settled
    }

    private struct Entry {
        var token: DeviceToken
        var slot: Slot
        var hasRow: Bool
    }

    private struct State {
        /// Devices handed over, from sequence number `base`; those from `head` on are past the checkpoint.
        var entries: [Entry] = []
        var base = 0
        var head = 0
        /// Settled entries past the checkpoint. (An answer for an entry behind it is a held device's.)
        var settledAhead = 0
        var last = ""
    }

    private let state = Mutex(State())
    private let holdAfter: Int

    /// A tracker holding a waiting device once `holdAfter` devices after it have settled.
    init(holdAfter: Int) {
        self.holdAfter = max(1, holdAfter)
    }

    /// Notes a device handed to the sender (in key order) and returns its sequence number. `hasRow`: an
    /// earlier claim left it a pending row.
    func dispatch(_ token: DeviceToken, hasRow: Bool) -> Int {
        state.withLock { s in
            s.entries.append(Entry(token: token, slot: .waiting, hasRow: hasRow))
            s.last = token.hex
            return s.base + s.entries.count - 1
        }
    }

    /// The last device handed to the sender ("" if none).
    var lastDispatched: String { state.withLock { $0.last } }

    /// Records a batch of answers about to be committed and says what the commit writes with them. Called once
    /// per commit, in order; after a failed commit the run stops, so nothing is undone.
    func commit(_ answers: [Answer]) -> Plan {
        let holdAfter = holdAfter
        return state.withLock { s in
            var plan = Plan()
            plan.mayHaveRow.reserveCapacity(answers.count)
            for a in answers {
                let i = a.seq - s.base
                if i < s.head {
                    // Held earlier: its pending row is replaced (or removed), and it is counted now.
                    plan.mayHaveRow.append(true)
                    plan.released += 1
                    if a.kind == .accepted { plan.accepted.add(retried: a.retried, possiblyDuplicated: a.possiblyDuplicated) }
                    continue
                }
                plan.mayHaveRow.append(s.entries[i].hasRow)
                s.entries[i].slot = a.kind == .accepted
                    ? .accepted(retried: a.retried, possiblyDuplicated: a.possiblyDuplicated) : .settled
                s.settledAhead += 1
            }
            var moved: DeviceToken?
            scan: while s.head < s.entries.count {
                let entry = s.entries[s.head]
                switch entry.slot {
                case .accepted(let retried, let dup):
                    plan.accepted.add(retried: retried, possiblyDuplicated: dup)
                    s.settledAhead -= 1
                    plan.released += 1
                case .settled:
                    s.settledAhead -= 1
                    plan.released += 1
                case .waiting:
                    if s.settledAhead < holdAfter { break scan }
                    plan.held.append(entry.token)
                }
                moved = entry.token
                s.head += 1
            }
            plan.checkpoint = moved?.hex
            if s.head > 4096 && s.head * 2 > s.entries.count {
                s.entries.removeFirst(s.head)
                s.base += s.head
                s.head = 0
            }
            return plan
        }
    }
}
