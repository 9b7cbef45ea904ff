import PushCore

/// One endpoint's state inside ``APNsSender/Shared`` (only touched under the sender's lock).
struct EndpointState {
    let target: SenderTarget
    /// One per connection (`connections`); empty when curl could not be set up (then `stop` is set).
    let transports: [Transport]
    /// How many notifications were handed to the transports, to take them in turn.
    var dispatched = 0
    var breaker: PruningBreaker
    /// Set once the endpoint stopped: every notification for it comes back unsent.
    var stop: EndpointStop?
    /// Set while the endpoint is unreachable.
    var outage: Outage?
    /// Notifications waiting for the endpoint to come back.
    var parked: [TransferJob] = []
    /// BadDeviceToken results whose prune waits for the breaker to be confident (released or discarded).
    var held: [TransferJob] = []

    /// An unreachable period: since when, how many probes failed, and the probe in flight.
    struct Outage {
        var sinceMs: Int64
        var failures: Int
        var lastError: String
        var probe: TransferJob?
        var probeScheduled = false
    }
}
