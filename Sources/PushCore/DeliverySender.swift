/// The one seam between the delivery engine and the push services: one prepared notification in, one
/// ``DeliveryResult`` out (through `onResult`), with the run boundaries the engine needs. It lives in the model,
/// beside ``DeliveryStore``, so the engine (PushDelivery) depends on no transport: the senders (PushSender: APNs,
/// Web Push, FCM, and the router that picks one per device) implement it, and engine tests drive a fake service
/// without TLS. Everything above it — windows, checkpoints, outcome commits, leases — is the same whatever service
/// a device belongs to.
public protocol DeliverySender: AnyObject, Sendable {
    /// Notifications the sender takes in flight at once (its window × connections): the engine sizes its windows
    /// from it.
    var inFlightLimit: Int { get }
    /// Live figures for `/metrics`.
    var metrics: SenderMetrics { get }
    /// Counts so far, over the sender's lifetime.
    var summary: SendSummary { get }
    /// Each endpoint's pruning-breaker state (keyed by endpoint URL), to persist for the next run.
    var breakerStates: [String: PruningBreaker.State] { get }
    /// Endpoints whose pruning breaker is tripped now.
    var trippedEndpoints: [String] { get }
    /// Each endpoint used so far: reachable, stopped, breaker tripped.
    var endpointConditions: [EndpointCondition] { get }

    /// Hands one notification over. `onResult` runs exactly once, on a transport thread, with its result (keep
    /// it short); `onPruneReleased` runs later if a held prune is released during this run.
    func submit(
        _ item: SendItem, onResult: @escaping @Sendable (DeliveryResult) -> Void,
        onPruneReleased: (@Sendable (DeviceToken) -> Void)?)
    /// A new run on a long-lived sender begins.
    func beginRun()
    /// The run is stopping: waiting notifications come back unsent at once; requests on the wire finish.
    func abandonWaiting(_ reason: String)
    /// The run ended; returns how many held prunes were discarded.
    @discardableResult func endRun() -> Int
    /// Waits for requests on the wire and stops the transport.
    func shutdown() async
}

extension DeliverySender {
    /// ``submit(_:onResult:onPruneReleased:)`` without a held-prune callback.
    public func submit(_ item: SendItem, onResult: @escaping @Sendable (DeliveryResult) -> Void) {
        submit(item, onResult: onResult, onPruneReleased: nil)
    }

    /// Sends one item and waits for its result (retries included).
    public func send(_ item: SendItem) async -> DeliveryResult {
        await withCheckedContinuation { (c: CheckedContinuation<DeliveryResult, Never>) in
            submit(item) { c.resume(returning: $0) }
        }
    }
}
