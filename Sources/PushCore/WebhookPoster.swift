/// Where the webhook dispatcher (PushDelivery) hands a batch of an app's events: a signed POST to the app's receiver.
/// The libcurl-backed `WebhookClient` (PushSender) is the real one; the engine knows only this, so it links no
/// transport, and tests can stand in for it.
public protocol WebhookPoster: Sendable {
    /// The receiver's URL, for logs.
    var url: String { get }
    /// POSTs `body` (JSON) signed at `timestamp` (epoch seconds) as delivery `delivery`; returns the HTTP status, or
    /// throws when no answer came (the error's description says why). Blocking: called from a thread of its own.
    func post(_ body: [UInt8], timestamp: Int64, delivery: String) throws -> Int
}
