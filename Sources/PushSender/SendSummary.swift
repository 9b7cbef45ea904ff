/// Counts for one sender's lifetime (one CLI run or broadcast), for the summary line and the exit code.
public struct SendSummary: Sendable, Equatable {
    /// Notifications with a final outcome.
    public var finished = 0
    /// 200 answers.
    public var accepted = 0
    /// Dead tokens (410, BadDeviceToken, DeviceTokenNotForTopic).
    public var tokenDead = 0
    /// Dead tokens handed to the registry for removal.
    public var pruned = 0
    /// Permanent rejections.
    public var rejected = 0
    /// Retries exhausted or transport failures.
    public var failed = 0
    /// Credential failures and notifications never sent because an endpoint was stopped.
    public var notSent = 0
    /// Retries scheduled (all notifications together).
    public var retried = 0
    /// Final outcomes marked possibly duplicated.
    public var possiblyDuplicated = 0
    /// Endpoints whose pruning breaker tripped (BadDeviceToken tokens were kept).
    public var breakerTripped: [String] = []
    /// Endpoints stopped, with the reason (credentials rejected, TLS failure, unreachable).
    public var stoppedEndpoints: [String] = []

    /// Creates an empty summary.
    public init() {}

    /// True when every notification was accepted and nothing needs attention.
    public var allAccepted: Bool { finished == accepted && breakerTripped.isEmpty && stoppedEndpoints.isEmpty }
}
