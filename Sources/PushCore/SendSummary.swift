/// Counts over one sender's lifetime, as the sender decided them (what the store then committed is counted
/// by the delivery engine).
public struct SendSummary: Sendable, Equatable {
    /// Notifications with a result (any kind).
    public var finished = 0
    /// 200 answers.
    public var accepted = 0
    /// Dead tokens (410, BadDeviceToken, DeviceTokenNotForTopic).
    public var tokenDead = 0
    /// Permanent rejections.
    public var rejected = 0
    /// Transient failures that exhausted their attempts.
    public var deferred = 0
    /// Not sent (or sent without an answer) because an endpoint stopped or the run stopped.
    public var unsent = 0
    /// Retries scheduled after 429/5xx answers (all notifications together).
    public var retried = 0
    /// Results marked possibly duplicated.
    public var possiblyDuplicated = 0
    /// Endpoints whose pruning breaker tripped, in order (BadDeviceToken tokens were kept).
    public var breakerTripped: [String] = []
    /// Endpoint stops, in order.
    public var stops: [EndpointStop] = []

    /// Creates an empty summary.
    public init() {}

    /// True when every notification was accepted and nothing needs attention.
    public var allAccepted: Bool { finished == accepted && breakerTripped.isEmpty && stops.isEmpty }

    /// Counts one finished notification (every sender counts its results here).
    public mutating func count(_ kind: DeliveryResult.Kind, possiblyDuplicated: Bool) {
        finished += 1
        switch kind {
        case .accepted: accepted += 1
        case .tokenDead: tokenDead += 1
        case .rejected: rejected += 1
        case .deferred: deferred += 1
        case .unsent: unsent += 1
        }
        if possiblyDuplicated { self.possiblyDuplicated += 1 }
    }

    /// Adds another sender's counts (``ServiceRouter`` combines its services').
    public mutating func add(_ other: SendSummary) {
        finished += other.finished
        accepted += other.accepted
        tokenDead += other.tokenDead
        rejected += other.rejected
        deferred += other.deferred
        unsent += other.unsent
        retried += other.retried
        possiblyDuplicated += other.possiblyDuplicated
        breakerTripped += other.breakerTripped
        stops += other.stops
    }
}
