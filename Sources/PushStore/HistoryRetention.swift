import Dispatch
import Logging
import PushCore

/// Applies `deliveryRetentionDays` to a registry: one pass (`pushctl maintenance`) or a pass at start and then
/// every `interval` (`pushctl serve`, `pushctl worker`). The cutoff is now − the retention on the clock passed
/// in, never the database's, so tests control it; passes run on the registry's store executor, off Swift's cooperative pool.
public struct HistoryRetention: Sendable {
    /// Rows deleted per transaction.
    public static let defaultBatchSize = 10_000
    /// How often a long-running process applies the retention.
    public static let defaultInterval = Duration.seconds(3600)

    /// The registry trimmed.
    public let registry: any RegistryStore
    /// History older than this many days is deleted.
    public let days: Int
    /// Rows deleted per transaction.
    public let batchSize: Int
    /// The clock (ms since 1970).
    public let nowMs: @Sendable () -> Int64

    /// Creates a retention for `registry`.
    public init(
        registry: any RegistryStore, days: Int, batchSize: Int = HistoryRetention.defaultBatchSize,
        nowMs: @escaping @Sendable () -> Int64 = SQLiteRegistry.systemNowMs
    ) {
        self.registry = registry
        self.days = days
        self.batchSize = batchSize
        self.nowMs = nowMs
    }

    /// Outcome rows retention never deletes: a deferred or pending device is still to be sent (a later run of the
    /// same id retries it), and the broadcast's counters count it.
    public static let keptOutcomeKinds: [DeliveryOutcome.Kind] = [.deferred, .pending]

    /// ``keptOutcomeKinds`` as an SQL list (`'deferred', 'pending'`).
    static var keptOutcomeKindsSQL: String { keptOutcomeKinds.map { "'\($0.rawValue)'" }.joined(separator: ", ") }

    /// The time before which history is deleted now (ms since 1970).
    public var cutoffMs: Int64 { nowMs() - Int64(days) * 86_400_000 }

    /// One pass, on the calling thread (it blocks).
    @available(*, noasync, message: "blocks on the database: run(every:logger:) runs passes on the store executor")
    public func runOnce() throws(StoreError) -> RetentionReport {
        try registry.trimHistory(before: cutoffMs, batchSize: batchSize)
    }

    /// Passes at once and then every `interval`, until the task is cancelled; `onPass` hears each pass's
    /// report or failure (a failed pass is tried again at the next interval). `sleep` waits between passes
    /// (tests pass one that moves their clock).
    public func run(
        every interval: Duration = HistoryRetention.defaultInterval,
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) },
        onPass: @escaping @Sendable (Result<RetentionReport, StoreError>) -> Void
    ) async {
        while !Task.isCancelled {
            let result: Result<RetentionReport, StoreError>
            do throws(StoreError) {
                let (cutoff, batchSize) = (cutoffMs, self.batchSize)
                result = .success(try await registry.run { try $0.trimHistory(before: cutoff, batchSize: batchSize) })
            } catch {
                result = .failure(error)
            }
            onPass(result)
            do { try await sleep(interval) } catch { return }
        }
    }

    /// `run` logging to `logger`: a line for each pass that deleted something, a warning for a failed one.
    public func run(every interval: Duration = HistoryRetention.defaultInterval, logger: Logger) async {
        let days = days
        await run(every: interval) { result in
            switch result {
            case .success(let report) where report.total > 0:
                logger.info("delivery history trimmed", metadata: Self.metadata(report, days: days))
            case .success:
                break
            case .failure(let error):
                logger.warning("delivery history retention failed: \(error.message)")
            }
        }
    }

    static func metadata(_ report: RetentionReport, days: Int) -> Logger.Metadata {
        [
            "retentionDays": "\(days)", "deliveries": "\(report.deliveries)", "prunes": "\(report.prunes)",
            "outcomes": "\(report.outcomes)", "jobTokens": "\(report.jobTokens)", "broadcasts": "\(report.broadcasts)",
        ]
    }
}
