/// How one of a sender's endpoints is doing, for `/metrics`.
public struct EndpointCondition: Sendable, Equatable {
    /// The endpoint's URL (`https://api.push.apple.com:443`).
    public var endpoint: String
    /// False while it is unreachable (its notifications are parked and probes reconnect with backoff).
    public var reachable: Bool
    /// True once it stopped for good (credentials refused, or unreachable past the outage limit).
    public var stopped: Bool
    /// True while its pruning breaker holds BadDeviceToken prunes back.
    public var breakerTripped: Bool

    /// Creates a condition.
    public init(endpoint: String, reachable: Bool, stopped: Bool, breakerTripped: Bool) {
        self.endpoint = endpoint
        self.reachable = reachable
        self.stopped = stopped
        self.breakerTripped = breakerTripped
    }
}
