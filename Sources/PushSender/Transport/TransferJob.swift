import PushCore

/// One notification moving through the sender, reused across its attempts (same notification id every time).
/// Owned by one stage at a time (the sender's queues, or the transport thread while in flight).
final class TransferJob: @unchecked Sendable {
    let item: SendItem
    let onResult: @Sendable (DeliveryResult) -> Void
    let onPruneReleased: (@Sendable (DeviceToken) -> Void)?
    /// Requests APNs answered (429/5xx count; dropped connections do not).
    var attempts = 0
    /// Attempts that were sent but lost with their connection (reset, GOAWAY, stream error, timeout).
    var dropped = 0
    var startedAtMs: Int64 = 0
    /// When the current attempt was handed to a transport (monotonic ns): the APNs latency metric.
    var attemptStartedNs: UInt64 = 0
    var possiblyDuplicated = false
    var refreshedProviderToken = false
    /// The `authorization` header of the current attempt (token mode).
    var authorization: String?
    /// The OAuth access token the current attempt carries (FCM): its age decides what a 401 means.
    var accessToken: AccessTokenCache.Token?
    /// The last transport error, for a deferred result.
    var lastError: String?
    /// A request prepared by its sender (Web Push: the subscription's URL, its headers, the encrypted body); nil
    /// for APNs, whose request ``Transport`` builds from the notification.
    var prepared: PreparedRequest?

    init(
        _ item: SendItem, onResult: @escaping @Sendable (DeliveryResult) -> Void,
        onPruneReleased: (@Sendable (DeviceToken) -> Void)? = nil
    ) {
        self.item = item
        self.onResult = onResult
        self.onPruneReleased = onPruneReleased
    }
}

/// What came back for one attempt.
struct TransferResponse {
    var status: Int
    var notificationId: String?
    var uniqueId: String?
    /// The answer's `Retry-After`, if it had a well-formed one.
    var retryAfter: RetryAfter? = nil
    var body: [UInt8]
    var usedHTTP2: Bool
    /// Request body bytes handed to the connection.
    var uploadedBytes: Int64
    /// True once the request reached a connection (libcurl's pre-transfer point); false means it was never
    /// sent, so APNs cannot have processed it.
    var sent: Bool
    var error: TransportError?
}

/// A request its sender prepared whole: the URL, the header lines (shared by requests that have them in common) and
/// the body.
struct PreparedRequest {
    var url: String
    var headers: HeaderList
    var body: [UInt8]
    /// Header lines of this request alone, which a sender that builds the shared header list adds to it (Push Kit's
    /// `push-type` for HarmonyOS: one list per distinct set, ``BearerTokenSender``).
    var ownHeaders: [String] = []
}
