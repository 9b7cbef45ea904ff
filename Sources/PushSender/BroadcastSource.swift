import Foundation
import PushCore
import PushStore
import Synchronization

/// A flag a signal handler sets to stop a broadcast from taking more tokens.
public final class StopFlag: Sendable {
    private let raised = Atomic<Int32>(0)
    /// Creates a lowered flag.
    public init() {}
    /// Raises the flag, remembering the signal number (or any non-zero reason).
    public func raise(_ signal: Int32 = 1) { _ = raised.compareExchange(expected: 0, desired: signal, ordering: .relaxed) }
    /// The signal that raised it, or 0.
    public var signal: Int32 { raised.load(ordering: .relaxed) }
    /// True once raised.
    public var isRaised: Bool { signal != 0 }
}

/// The broadcast's devices as send items: keyset pages from the registry, one short read each, so memory
/// does not grow with the number of devices. The sender asks for the next item only when its window has
/// room (back-pressure). Before a page is handed over, its last token is stored as `dispatched`, and on a
/// resume tokens that already have an outcome are skipped.
struct BroadcastSource: AsyncSequence {
    typealias Element = SendItem

    let registry: Registry
    let record: BroadcastRecord
    let bundleId: String
    let batchSize: Int
    let tracker: CheckpointTracker
    let stop: StopFlag
    let pacer: Pacer
    let sleeper: Sleeper
    let clock: SenderClock

    func makeAsyncIterator() -> Iterator {
        Iterator(source: self, after: record.checkpoint, pacer: pacer)
    }

    struct Iterator: AsyncIteratorProtocol {
        let source: BroadcastSource
        var after: String
        var pacer: Pacer
        var page: [SendItem] = []
        var index = 0
        var finished = false

        init(source: BroadcastSource, after: String, pacer: Pacer) {
            self.source = source
            self.after = after
            self.pacer = pacer
        }

        mutating func next() async throws -> SendItem? {
            while index >= page.count {
                if finished || source.stop.isRaised { return nil }
                try await loadPage()
            }
            if source.stop.isRaised { return nil }
            let item = page[index]
            index += 1
            source.tracker.dispatch(item.request.token.hex)
            return item
        }

        private mutating func loadPage() async throws {
            let r = source.record
            let devices: [(token: DeviceToken, environment: APNsEnvironment?)]
            if r.explicitTokens {
                devices = try source.registry.broadcastTokens(id: r.id, after: after, limit: source.batchSize)
                    .map { (token: $0.0, environment: $0.1) }
            } else {
                let start = after.isEmpty ? nil : try DeviceToken(parsing: after)
                devices = try source.registry.list(
                    app: r.app, channel: r.channel, environment: r.environment, limit: source.batchSize, after: start
                ).map { (token: $0.token, environment: Optional($0.environment)) }
            }
            page = []
            index = 0
            guard let last = devices.last else {
                finished = true
                return
            }
            // Resuming: skip tokens an interrupted run already finished (only possible up to `dispatched`).
            var done = Set<String>()
            if !r.dispatched.isEmpty, devices[0].token.hex <= r.dispatched {
                done = try source.registry.broadcastOutcomeTokens(id: r.id, after: after, through: last.token.hex)
            }
            try source.registry.markDispatched(id: r.id, through: last.token.hex)
            after = last.token.hex
            if devices.count < source.batchSize { finished = true }
            page.reserveCapacity(devices.count)
            for device in devices where !done.contains(device.token.hex) {
                let request = NotificationRequest(
                    token: device.token, topic: bundleTopic, pushType: r.pushType, priority: r.priority,
                    expiration: r.expiration, collapseId: r.collapseId,
                    apnsId: APNsID.derived(broadcast: r.id, token: device.token), payload: r.payload)
                page.append(SendItem(request, environment: device.environment))
            }
            let wait = pacer.delay(forNext: page.count, now: Double(source.clock.nowMs()) / 1000)
            if wait > 0 { await source.sleeper.sleep(milliseconds: Int((wait * 1000).rounded(.up))) }
        }

        private var bundleTopic: String {
            let suffix = source.record.pushType.topicSuffix
            return suffix.isEmpty || source.bundleId.hasSuffix(suffix) ? source.bundleId : source.bundleId + suffix
        }
    }
}
