import PushCore

/// Where a broadcast is in its life.
public enum BroadcastState: String, Sendable, CaseIterable {
    /// Accepted (e.g. by the HTTP API) but not started.
    case pending
    /// A process holds the app's lease and is sending.
    case running
    /// Stopped by a signal or a crash; the same id resumes it.
    case interrupted
    /// Every targeted token has a final outcome.
    case completed
    /// Stopped for good (credentials refused, configuration gone).
    case failed
}

/// A broadcast: what to send, to whom, and how far it got.
public struct BroadcastRecord: Sendable, Equatable {
    /// The id (`--id`, or generated).
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
    /// `apns-collapse-id`, if any.
    public var collapseId: String?
    /// Only devices in this channel, if set.
    public var channel: String?
    /// Only devices in this environment, if set.
    public var environment: APNsEnvironment?
    /// True when the target is an explicit token list (``Registry/createBroadcast(_:tokens:)``) rather
    /// than the app's registered devices.
    public var explicitTokens: Bool = false
    /// Devices targeted when the broadcast started.
    public var total: Int
    /// Every token ≤ this (hex) has a final outcome recorded; "" before the first.
    public var checkpoint: String
    /// Tokens ≤ this (hex) were handed to the sender; those without an outcome may have been delivered.
    public var dispatched: String
    /// Why it failed, if it did.
    public var error: String?
    /// Created (ms since 1970).
    public var createdMs: Int64
    /// Last changed (ms since 1970).
    public var updatedMs: Int64
    /// Completed or failed (ms since 1970).
    public var finishedMs: Int64?

    /// Creates a record for a new broadcast.
    public init(
        id: String, app: String, state: BroadcastState = .pending, payload: [UInt8], pushType: PushType,
        priority: PushPriority, expiration: Int64? = nil, collapseId: String? = nil, channel: String? = nil,
        environment: APNsEnvironment? = nil, total: Int = 0, checkpoint: String = "", dispatched: String = "",
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
        self.checkpoint = checkpoint
        self.dispatched = dispatched
        self.error = error
        self.createdMs = createdMs
        self.updatedMs = updatedMs
        self.finishedMs = finishedMs
    }
}

/// One token's final outcome in a broadcast.
public struct BroadcastOutcome: Sendable, Equatable {
    /// The device.
    public var token: DeviceToken
    /// `accepted`, `tokenDead`, `rejected`, `failed`, `credentialFailure` or `notSent`.
    public var kind: String
    /// The last HTTP status (0 = no answer).
    public var status: Int
    /// Apple's reason or the transport error.
    public var reason: String?
    /// Requests made.
    public var attempts: Int
    /// The token was pruned from the registry.
    public var pruned: Bool
    /// An earlier attempt (possibly in an interrupted run) may have reached the device.
    public var possiblyDuplicated: Bool

    /// Creates an outcome.
    public init(token: DeviceToken, kind: String, status: Int, reason: String?, attempts: Int, pruned: Bool, possiblyDuplicated: Bool) {
        self.token = token
        self.kind = kind
        self.status = status
        self.reason = reason
        self.attempts = attempts
        self.pruned = pruned
        self.possiblyDuplicated = possiblyDuplicated
    }
}

/// A broadcast's totals, aggregated from its recorded outcomes (so they survive resumes).
public struct BroadcastCounts: Sendable, Equatable {
    /// Tokens with a final outcome.
    public var done = 0
    /// 200 from APNs.
    public var accepted = 0
    /// Tokens pruned.
    public var pruned = 0
    /// Notifications that needed more than one request.
    public var retried = 0
    /// Notifications that may have reached the device twice.
    public var possiblyDuplicated = 0
    /// Outcomes other than accepted, by reason (or kind when there is no reason).
    public var notAcceptedByReason: [String: Int] = [:]

    /// Creates empty counts.
    public init() {}

    /// Outcomes other than accepted.
    public var notAccepted: Int { done - accepted }
}

/// Taking an app's broadcast lease.
public enum LeaseResult: Sendable, Equatable {
    /// This owner holds the lease now.
    case acquired
    /// Another live owner holds it, running this broadcast.
    case held(broadcastId: String)
}
