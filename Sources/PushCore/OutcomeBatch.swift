/// Everything one commit writes, in ONE transaction: the rows of devices that need action later (dead tokens,
/// rejections, deferrals, pending devices), the job's counts, the shard's checkpoint, delivery-log rows as the
/// app's scope says, prunes, last-success times of logged accepted notifications, and BadDeviceToken prunes
/// released by the breaker. An accepted device of a broadcast writes nothing of its own.
public struct OutcomeBatch: Sendable {
    /// The broadcast part of a commit, written only while `fence` still holds shard `shard`.
    public struct Job: Sendable, Equatable {
        /// The broadcast id.
        public var id: String
        /// The shard the outcomes belong to.
        public var shard: Int
        /// The shard's fence the claim holds; a commit under a stale fence fails with ``DeliveryStoreError/Code/leaseLost``.
        public var fence: Int64
        /// The claim's run number the outcomes belong to.
        public var run: Int
        /// The shard's new main-pass checkpoint, when it moved.
        public var checkpoint: String?
        /// Accepted devices this commit adds to the job's counts (see ``AcceptedTally``). The store counts the
        /// other outcomes itself, with their rows.
        public var accepted = AcceptedTally()

        /// Creates the job part.
        public init(id: String, shard: Int, fence: Int64, run: Int, checkpoint: String? = nil, accepted: AcceptedTally = .init()) {
            self.id = id
            self.shard = shard
            self.fence = fence
            self.run = run
            self.checkpoint = checkpoint
            self.accepted = accepted
        }
    }

    /// The app.
    public var app: String
    /// The broadcast, for broadcasts and send jobs; nil for `pushctl send` (delivery log only).
    public var job: Job?
    /// Outcomes in the order they arrived.
    public var outcomes: [DeliveryOutcome]
    /// BadDeviceToken tokens whose prune the breaker released after their outcome was handed over.
    public var releasedPrunes: [DeviceToken]
    /// Also write webhook events (tokens pruned, final failures) to the outbox, in the same transaction: the
    /// app has a webhook.
    public var recordEvents = false
    /// Which outcomes become delivery-log rows (the app's `deliveryLog`); every outcome is counted either way.
    public var deliveryLog = DeliveryLogScope.default
    /// The notifications were sent to listed tokens rather than to all devices or a channel (see
    /// ``DeliveryLogScope/failures``).
    public var direct = false

    /// Creates a batch.
    public init(app: String, job: Job? = nil, outcomes: [DeliveryOutcome], releasedPrunes: [DeviceToken] = []) {
        self.app = app
        self.job = job
        self.outcomes = outcomes
        self.releasedPrunes = releasedPrunes
    }

    /// True when `kind` becomes a delivery-log row in this batch.
    public func logs(_ kind: DeliveryOutcome.Kind) -> Bool { deliveryLog.logs(kind, direct: direct) }
}

/// What a commit changed, as the store decided it.
public struct CommitReceipt: Sendable, Equatable {
    /// Tokens the store removed from the registry in this commit.
    public var pruned: Set<DeviceToken>
    /// The batch's broadcast or send job has been cancelled (`pushctl jobs cancel`, `DELETE …/notifications/{id}`):
    /// the batch is recorded, and the run should send nothing more. Found at every commit, so a cancel takes
    /// effect within one commit interval rather than at the next heartbeat.
    public var cancelled: Bool

    /// Creates a receipt.
    public init(pruned: Set<DeviceToken> = [], cancelled: Bool = false) {
        self.pruned = pruned
        self.cancelled = cancelled
    }
}
