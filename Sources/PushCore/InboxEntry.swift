/// One notification the built-in simulator accepted, as the development inbox shows it: which service, to which
/// device, for which app's credentials, when, and the simulator's record of it — the same JSON object a
/// `--record` file line holds (docs/simulator.md, "The record"), so the console and a test reading the file see one
/// format.
public struct InboxEntry: Sendable, Equatable {
    /// Arrival order in the simulator, from 1: newer entries have larger numbers (the inbox's "clear" hides the
    /// entries up to one).
    public var sequence: Int64
    /// The service that accepted it.
    public var service: PushService
    /// The device: an APNs token (hex; `channel:ID` for a broadcast to a channel), a Web Push subscription's id (the
    /// last segment of its endpoint), an FCM registration token (`topic:NAME` for a topic message).
    public var device: String
    /// What ties it to an app: APNs' topic, the VAPID public key the Web Push message was signed with, the FCM
    /// project.
    public var appKey: String
    /// When the simulator accepted it (ms since 1970).
    public var receivedAtMs: Int64
    /// The record: the JSON object of its `--record` line.
    public var record: JSONValue

    public init(sequence: Int64, service: PushService, device: String, appKey: String, receivedAtMs: Int64, record: JSONValue) {
        self.sequence = sequence
        self.service = service
        self.device = device
        self.appKey = appKey
        self.receivedAtMs = receivedAtMs
        self.record = record
    }
}
