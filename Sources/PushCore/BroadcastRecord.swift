/// A broadcast or send job: what to send, to whom, and how far it got.
public struct BroadcastRecord: Sendable, Equatable {
    /// The id (`--id`, the API's `"id"`, or generated).
    public var id: String
    /// The app.
    public var app: String
    /// The state.
    public var state: BroadcastState
    /// The prepared payload bytes (identical on every resume).
    public var payload: [UInt8]
    /// `apns-push-type`.
    public var pushType: PushType
    /// `apns-priority`.
    public var priority: PushPriority
    /// `apns-expiration`, if any.
    public var expiration: Int64?
    /// An explicit `apns-collapse-id`; nil means the default derived from the id
    /// (``NotificationID/collapseId(forJob:)``), so a device that gets a copy twice shows it once.
    public var collapseId: String?
    /// Only devices in this channel, if set.
    public var channel: String?
    /// Only devices in this environment, if set.
    public var environment: APNsEnvironment?
    /// True when the target is an explicit token list rather than the app's registered devices.
    public var explicitTokens: Bool = false
    /// Not before this time (ms since 1970, on the store's clock): a scheduled job waits as pending until then
    /// (`--at`, the API's `"at"`). Nil: as soon as it is stored.
    public var scheduledMs: Int64?
    /// The audience, per-locale payloads and local-time wave, if any (see ``JobTargeting``).
    public var targeting: JobTargeting?
    /// Devices targeted: counted when it first starts, and set to the number of devices with an
    /// outcome when the broadcast completes (devices registered or removed meanwhile change it).
    public var total: Int
    /// Rounds started so far: 1 when it first starts, one more each time a completed broadcast is run again
    /// for its deferred devices.
    public var run: Int = 0
    /// Why the last run stopped early, if it did.
    public var error: String?
    /// Created (ms since 1970).
    public var createdMs: Int64
    /// Last changed (ms since 1970).
    public var updatedMs: Int64
    /// Completed (ms since 1970).
    public var finishedMs: Int64?

    /// Creates a record for a new broadcast.
    public init(
        id: String, app: String, state: BroadcastState = .pending, payload: [UInt8], pushType: PushType,
        priority: PushPriority, expiration: Int64? = nil, collapseId: String? = nil, channel: String? = nil,
        environment: APNsEnvironment? = nil, total: Int = 0,
        error: String? = nil, createdMs: Int64 = 0, updatedMs: Int64 = 0, finishedMs: Int64? = nil
    ) {
        self.id = id
        self.app = app
        self.state = state
        self.payload = payload
        self.pushType = pushType
        self.priority = priority
        self.expiration = expiration
        self.collapseId = collapseId
        self.channel = channel
        self.environment = environment
        self.total = total
        self.error = error
        self.createdMs = createdMs
        self.updatedMs = updatedMs
        self.finishedMs = finishedMs
    }

    /// True when its devices are picked by the store's audience query (an audience, a wave, or per-locale text,
    /// which needs each device's locale).
    public var needsAudienceQuery: Bool { !explicitTokens && !(targeting?.isEmpty ?? true) }

    /// The `apns-collapse-id` every notification of this broadcast carries.
    public var effectiveCollapseId: String { collapseId ?? NotificationID.collapseId(forJob: id) }

    /// True when `other` asks for the same notification to the same devices (an idempotent retry of the
    /// same id); state and progress are ignored.
    public func describesSameJob(as other: BroadcastRecord) -> Bool {
        app == other.app && payload == other.payload && pushType == other.pushType && priority == other.priority
            && expiration == other.expiration && collapseId == other.collapseId && channel == other.channel
            && environment == other.environment && explicitTokens == other.explicitTokens && scheduledMs == other.scheduledMs
            && (targeting ?? JobTargeting()) == (other.targeting ?? JobTargeting())
    }

    /// True when a worker or server may start it at `nowMs` (the store's clock): it is not scheduled, or its
    /// time has come.
    public func isDue(atMs nowMs: Int64) -> Bool { scheduledMs.map { $0 <= nowMs } ?? true }

    /// True while it waits for its scheduled time.
    public func isWaiting(atMs nowMs: Int64) -> Bool { state == .pending && !isDue(atMs: nowMs) }
}
