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
}
