import Foundation
import PushCore
import PushSender
import Synchronization

/// Prints `pushctl send` results once they are recorded, buffered, one line each, and counts them.
final class ResultPrinter: Sendable {
    /// Results by kind.
    struct Counts {
        var total = 0
        var accepted = 0
        var dead = 0
        var rejected = 0
        var deferred = 0
        var unsent = 0
    }

    private let json: Bool
    private let state = Mutex<(buffer: [UInt8], counts: Counts)>(([], Counts()))

    init(json: Bool) { self.json = json }

    /// What was printed so far.
    var counts: Counts { state.withLock { $0.counts } }

    func print(_ r: DeliveryResult, note: String? = nil) {
        var line: String
        if json {
            var pairs: [(String, JSONValue)] = [
                ("token", .string(r.token.masked)), ("status", .int(Int64(r.status))),
                ("result", .string(r.kind.rawValue)), ("notificationId", .string(r.notificationId)),
                // Its first name, for scripts written before Web Push and FCM (deprecated: docs/sending.md).
                ("apnsId", .string(r.notificationId)),
                ("attempts", .int(Int64(r.attempts))),
            ]
            if let reason = r.reason { pairs.append(("reason", .string(reason.rawValue))) }
            if let u = r.uniqueId { pairs.append(("uniqueId", .string(u))) }
            if r.pruned { pairs.append(("pruned", .bool(true))) }
            if r.possiblyDuplicated { pairs.append(("possiblyDuplicated", .bool(true))) }
            if let e = r.stop?.message ?? r.error { pairs.append(("error", .string(e))) }
            if let note { pairs.append(("note", .string(note))) }
            line = JSONValue.object(pairs).encodedString
        } else {
            line = "\(r.token.masked) \(r.status) \(r.reason?.rawValue ?? (r.isAccepted ? "accepted" : r.kind.rawValue)) \(r.notificationId)"
            if r.pruned { line += " pruned" }
            if let e = r.stop?.message ?? r.error { line += " (\(e))" }
            if let note { line += " [\(note)]" }
        }
        let full = state.withLock { s -> Bool in
            s.buffer.append(contentsOf: line.utf8)
            s.buffer.append(0x0a)
            s.counts.total += 1
            switch r.kind {
            case .accepted: s.counts.accepted += 1
            case .tokenDead: s.counts.dead += 1
            case .rejected: s.counts.rejected += 1
            case .deferred: s.counts.deferred += 1
            case .unsent: s.counts.unsent += 1
            }
            return s.buffer.count > 64 * 1024
        }
        if full { flush() }
    }

    func flush() {
        let bytes = state.withLock { s -> [UInt8] in
            let bytes = s.buffer
            s.buffer.removeAll(keepingCapacity: true)
            return bytes
        }
        if !bytes.isEmpty { FileHandle.standardOutput.write(Data(bytes)) }
    }
}
