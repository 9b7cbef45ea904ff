import Foundation
import Synchronization
import PushCore

/// Counters, the bounded in-memory list of accepted notifications and the JSON-lines record file.
///
/// Shared by every connection, so all state sits behind one lock; file writes are batched so the hot
/// path only appends bytes to a buffer.
final class SimulatorRecorder: Sendable {
    private struct State {
        var counters = SimulatorCounters()
        var ring: [ReceivedNotification] = []
        var ringStart = 0
        var webPushes: [ReceivedWebPush] = []
        var webPushStart = 0
        var unifiedPushes: [ReceivedUnifiedPush] = []
        var unifiedPushStart = 0
        var pending: [UInt8] = []
        var file: FileHandle?
        /// The development inbox: the newest accepted notifications of every service, in arrival order.
        var inbox: [InboxEntry] = []
        var inboxStart = 0
        var sequence: Int64 = 0
    }

    private let state: Mutex<State>
    private let limit: Int
    /// Entries the development inbox keeps (0: none, and no record is encoded for it).
    let inboxLimit: Int
    private static let flushThreshold = 64 * 1024

    init(limit: Int, recordFile: String?, inboxLimit: Int = 0) throws(SimulatorError) {
        var s = State()
        if let path = recordFile {
            if !FileManager.default.fileExists(atPath: path) {
                guard FileManager.default.createFile(atPath: path, contents: nil) else {
                    throw SimulatorError(.badConfiguration, "cannot create record file \(path)")
                }
            }
            guard let handle = FileHandle(forWritingAtPath: path) else {
                throw SimulatorError(.badConfiguration, "cannot open record file \(path) for writing")
            }
            handle.seekToEndOfFile()
            s.file = handle
        }
        self.limit = max(0, limit)
        self.inboxLimit = max(0, inboxLimit)
        self.state = Mutex(s)
    }

    /// The inbox's entries, newest first, at most `limit`.
    func inbox(limit: Int) -> [InboxEntry] {
        state.withLock { s in
            let ordered = Array(s.inbox[s.inboxStart...] + s.inbox[..<s.inboxStart])
            return Array(ordered.reversed().prefix(max(0, limit)))
        }
    }

    /// Keeps one accepted notification in the inbox (the lock is held).
    private func inboxKeep(
        _ s: inout State, _ service: PushService, device: String, appKey: String, atMs: Int64, _ line: (inout [UInt8]) -> Void
    ) {
        guard inboxLimit > 0 else { return }
        var bytes: [UInt8] = []
        line(&bytes)
        s.sequence += 1
        let entry = InboxEntry(
            sequence: s.sequence, service: service, device: device, appKey: appKey, receivedAtMs: atMs,
            record: (try? JSONValue(parsing: bytes)) ?? .null)
        Self.keep(entry, in: &s.inbox, start: &s.inboxStart, limit: inboxLimit)
    }

    func answered(status: Int, reason: APNsReason?, accepted: ReceivedNotification?) {
        state.withLock { s in
            s.counters.requests += 1
            s.counters.byStatus[status, default: 0] += 1
            if let reason { s.counters.byReason[reason.rawValue, default: 0] += 1 }
            guard let accepted else { return }
            s.counters.accepted += 1
            Self.keep(accepted, in: &s.ring, start: &s.ringStart, limit: limit)
            if s.file != nil { Self.write(&s, accepted.jsonLine) }
            inboxKeep(
                &s, .apns, device: accepted.channelId.map { "channel:\($0)" } ?? accepted.request.token.hex,
                appKey: accepted.request.topic, atMs: accepted.receivedAtMs, accepted.jsonLine)
        }
    }

    /// Counts an answer of the Web Push service that records no message (a rejection, a subscribe, an unsubscribe).
    func answered(status: Int, reasonText: String?) {
        state.withLock { s in
            s.counters.requests += 1
            s.counters.byStatus[status, default: 0] += 1
            if let reasonText { s.counters.byReason[reasonText, default: 0] += 1 }
        }
    }

    /// Counts and records a push message the Web Push service accepted (201).
    func answered(webPush: ReceivedWebPush) {
        state.withLock { s in
            s.counters.requests += 1
            s.counters.byStatus[201, default: 0] += 1
            s.counters.accepted += 1
            s.counters.webPushesAccepted += 1
            Self.keep(webPush, in: &s.webPushes, start: &s.webPushStart, limit: limit)
            if s.file != nil { Self.write(&s, webPush.jsonLine) }
            inboxKeep(&s, .webpush, device: webPush.subscriptionId, appKey: webPush.vapidKey, atMs: webPush.receivedAtMs, webPush.jsonLine)
        }
    }

    /// Counts and records a push message the UnifiedPush distributor accepted (201), in the development inbox under
    /// its VAPID key (a push without one is kept there under none, and shown to no app).
    func answered(unifiedPush: ReceivedUnifiedPush) {
        state.withLock { s in
            s.counters.requests += 1
            s.counters.byStatus[201, default: 0] += 1
            s.counters.accepted += 1
            s.counters.unifiedPushesAccepted += 1
            Self.keep(unifiedPush, in: &s.unifiedPushes, start: &s.unifiedPushStart, limit: limit)
            if s.file != nil { Self.write(&s, unifiedPush.jsonLine) }
            inboxKeep(
                &s, .unifiedpush, device: unifiedPush.subscriptionId, appKey: unifiedPush.vapidKey ?? "",
                atMs: unifiedPush.receivedAtMs, unifiedPush.jsonLine)
        }
    }

    /// Counts and records a message the FCM endpoint accepted (200).
    func answered(fcm message: ReceivedFCMMessage) {
        state.withLock { s in
            s.counters.requests += 1
            s.counters.byStatus[200, default: 0] += 1
            s.counters.accepted += 1
            s.counters.fcmMessagesAccepted += 1
            if s.file != nil { Self.write(&s, message.jsonLine) }
            let device = message.token ?? message.topic.map { "topic:\($0)" } ?? message.condition.map { "condition:\($0)" } ?? ""
            inboxKeep(&s, .fcm, device: device, appKey: message.projectId, atMs: message.receivedAtMs, message.jsonLine)
        }
    }

    /// Counts and records the messages the Huawei Push Kit endpoint accepted in one answer (200), one per token
    /// delivered, and keeps them in the inbox (the app's key there is the client ID).
    func answered(hms messages: [ReceivedHMSMessage]) {
        state.withLock { s in
            s.counters.requests += 1
            s.counters.byStatus[200, default: 0] += 1
            s.counters.accepted += messages.count
            s.counters.hmsMessagesAccepted += messages.count
            for message in messages {
                if s.file != nil { Self.write(&s, message.jsonLine) }
                let device = message.token ?? message.topic.map { "topic:\($0)" } ?? message.condition.map { "condition:\($0)" } ?? ""
                inboxKeep(&s, .hms, device: device, appKey: message.clientId, atMs: message.receivedAtMs, message.jsonLine)
            }
        }
    }

    /// Counts and records the messages the Push Kit scenario endpoint (HarmonyOS) accepted in one answer, one per
    /// token delivered, and keeps them in the inbox (the app's key there is the project ID).
    func answered(harmonyos messages: [ReceivedHarmonyOSMessage]) {
        state.withLock { s in
            s.counters.requests += 1
            s.counters.byStatus[200, default: 0] += 1
            s.counters.accepted += messages.count
            for message in messages {
                if s.file != nil { Self.write(&s, message.jsonLine) }
                inboxKeep(&s, .harmonyos, device: message.token, appKey: message.projectId, atMs: message.receivedAtMs, message.jsonLine)
            }
        }
    }

    /// Records an access token Huawei's OAuth endpoint granted (the answer itself is counted by
    /// ``answered(status:reasonText:)``): `{"service":"hms-oauth","clientId","expiresIn","receivedAt"}`, so a test
    /// reading the record file can count a run's grants per app.
    func granted(hmsClientId clientId: String, expiresIn: Int64, atMs: Int64) {
        state.withLock { s in
            s.counters.hmsAccessTokensGranted += 1
            guard s.file != nil else { return }
            let line = JSONValue.object([
                ("service", .string("hms-oauth")), ("clientId", .string(clientId)), ("expiresIn", .int(expiresIn)),
                ("receivedAt", .int(atMs)),
            ])
            Self.write(&s) { line.encode(into: &$0) }
        }
    }

    /// Records an access token the OAuth token endpoint granted (the answer itself is counted by
    /// ``answered(status:reasonText:)``): `{"service":"oauth","clientEmail","expiresIn","receivedAt"}`, so a test
    /// reading the record file can count grants per account across a run.
    func granted(clientEmail: String, expiresIn: Int64, atMs: Int64) {
        state.withLock { s in
            s.counters.accessTokensGranted += 1
            guard s.file != nil else { return }
            let line = JSONValue.object([
                ("service", .string("oauth")), ("clientEmail", .string(clientEmail)), ("expiresIn", .int(expiresIn)),
                ("receivedAt", .int(atMs)),
            ])
            Self.write(&s) { line.encode(into: &$0) }
        }
    }

    /// Appends to a ring of at most `limit` records (the oldest overwritten first).
    private static func keep<Record>(_ record: Record, in ring: inout [Record], start: inout Int, limit: Int) {
        guard limit > 0 else { return }
        if ring.count < limit {
            ring.append(record)
        } else {
            ring[start] = record
            start = (start + 1) % limit
        }
    }

    /// Buffers one record line for the file, writing the buffer out once it is large.
    private static func write(_ s: inout State, _ line: (inout [UInt8]) -> Void) {
        line(&s.pending)
        s.pending.append(UInt8(ascii: "\n"))
        if s.pending.count >= flushThreshold { flush(&s) }
    }

    func count(_ update: @Sendable (inout SimulatorCounters) -> Void) {
        state.withLock { update(&$0.counters) }
    }

    /// Writes buffered record lines (called before every flush to the socket, by ``RecordBeforeFlushHandler``, and on
    /// stop).
    func flush() {
        state.withLock { Self.flush(&$0) }
    }

    private static func flush(_ s: inout State) {
        guard let file = s.file, !s.pending.isEmpty else { return }
        file.write(Data(s.pending))
        s.pending.removeAll(keepingCapacity: true)
    }

    func close() {
        state.withLock { s in
            Self.flush(&s)
            try? s.file?.close()
            s.file = nil
        }
    }

    var counters: SimulatorCounters { state.withLock { $0.counters } }

    var received: [ReceivedNotification] {
        state.withLock { s in Array(s.ring[s.ringStart...] + s.ring[..<s.ringStart]) }
    }

    var webPushes: [ReceivedWebPush] {
        state.withLock { s in Array(s.webPushes[s.webPushStart...] + s.webPushes[..<s.webPushStart]) }
    }

    var unifiedPushes: [ReceivedUnifiedPush] {
        state.withLock { s in Array(s.unifiedPushes[s.unifiedPushStart...] + s.unifiedPushes[..<s.unifiedPushStart]) }
    }

    func reset() {
        state.withLock { s in
            s.counters = SimulatorCounters()
            s.ring.removeAll()
            s.ringStart = 0
            s.webPushes.removeAll()
            s.webPushStart = 0
            s.unifiedPushes.removeAll()
            s.unifiedPushStart = 0
        }
    }
}
