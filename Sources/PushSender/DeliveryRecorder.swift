import Dispatch
import Foundation
import Logging
import PushCore

/// Buffers final outcomes and writes them to a ``DeliverySink`` in batches on a background queue, so the
/// curl thread never waits for SQLite and the store sees one transaction per batch, not per notification.
final class DeliveryRecorder: @unchecked Sendable {
    private let sink: DeliverySink?
    private let batchSize: Int
    private let logger: Logger
    private let queue = DispatchQueue(label: "PushSender.DeliveryRecorder")
    private let lock = NSLock()
    private var buffer: [DeliveryResult] = []

    init(sink: DeliverySink?, batchSize: Int, logger: Logger) {
        self.sink = sink
        self.batchSize = batchSize
        self.logger = logger
        buffer.reserveCapacity(sink == nil ? 0 : batchSize)
    }

    /// Adds one final outcome; hands a full batch to the writer queue.
    func add(_ result: DeliveryResult) {
        guard sink != nil else { return }
        lock.lock()
        buffer.append(result)
        let full = buffer.count >= batchSize
        let batch = full ? buffer : []
        if full { buffer.removeAll(keepingCapacity: true) }
        lock.unlock()
        if full { write(batch) }
    }

    /// Prunes a token on the writer queue (after earlier records); `done` gets whether a row was removed.
    func prune(_ token: DeviceToken, reason: APNsReason, timestampMs: Int64?) {
        guard let sink else { return }
        let logger = logger
        queue.async {
            do { _ = try sink.prune(token: token, reason: reason, apnsTimestampMs: timestampMs) } catch {
                logger.error("prune failed", metadata: ["token": "\(token.masked)", "error": "\(error)"])
            }
        }
    }

    private func takeBuffer() -> [DeliveryResult] {
        lock.lock()
        defer { lock.unlock() }
        let batch = buffer
        buffer.removeAll(keepingCapacity: true)
        return batch
    }

    private func write(_ batch: [DeliveryResult]) {
        guard let sink, !batch.isEmpty else { return }
        let logger = logger
        queue.async {
            do { try sink.record(batch) } catch {
                logger.error("recording \(batch.count) delivery results failed", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Writes what is buffered and waits until every queued write has finished.
    func flush() async {
        write(takeBuffer())
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in queue.async { c.resume() } }
    }
}
