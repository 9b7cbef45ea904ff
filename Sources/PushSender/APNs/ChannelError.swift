import PushCore

/// A failed channel-management or broadcast request, with one line a CLI can print as is.
public struct ChannelError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure this is.
    public enum Code: Sendable, Equatable, CustomStringConvertible {
        /// APNs answered with an error: its HTTP status and reason (after any retries of transient answers).
        case rejected(status: Int, reason: APNsReason)
        /// No answer: the endpoint could not be reached or the connection died (after retries).
        case unreachable
        /// Our credentials could not be used: the provider token could not be made, or the TLS handshake
        /// refused our client certificate (or the server's did not verify).
        case credentials
        /// APNs answered something this client cannot read (a 201 without `apns-channel-id`, bad JSON, …).
        case invalidResponse
        /// Anything else (curl could not be set up, a request could not be built).
        case unknown

        /// A short machine-readable name (`rejected`, `unreachable`, …).
        public var description: String {
            switch self {
            case .rejected: "rejected"
            case .unreachable: "unreachable"
            case .credentials: "credentials"
            case .invalidResponse: "invalid-response"
            case .unknown: "unknown"
            }
        }
    }

    /// The failure class.
    public let code: Code
    /// One line: what failed and, for APNs' reasons, what the reason means. Never holds a secret.
    public let message: String
    /// The `apns-request-id` of the last attempt, when there was an answer.
    public var requestId: String?

    /// Creates an error.
    public init(_ code: Code, _ message: String, requestId: String? = nil) {
        self.code = code
        self.message = message
        self.requestId = requestId
    }

    /// An APNs rejection: `APNs refused: <Reason> (<what it means>)`. A refusal of the credentials (the reasons
    /// ``APNsOutcome/classify(status:reason:timestampMs:)`` calls credential failures, as for device sends) is a
    /// ``Code/credentials`` failure, whatever the request was.
    public static func rejected(status: Int, reason: APNsReason, requestId: String? = nil) -> ChannelError {
        let message = "APNs refused: \(reason.rawValue) (\(meaning(of: reason, status: status)))"
        if case .credentialFailure = APNsOutcome.classify(status: status, reason: reason) {
            return ChannelError(.credentials, message, requestId: requestId)
        }
        return ChannelError(.rejected(status: status, reason: reason), message, requestId: requestId)
    }

    /// The APNs reason of a rejection, else nil.
    public var reason: APNsReason? {
        if case .rejected(_, let reason) = code { return reason }
        return nil
    }

    /// The message.
    public var description: String { message }

    /// What APNs means by `reason` on a channel or broadcast request, in a few words.
    public static func meaning(of reason: APNsReason, status: Int) -> String {
        switch reason {
        case .missingChannelId: "the request carries no apns-channel-id header"
        case .badChannelId: "the channel id is malformed"
        case .channelNotRegistered: "the channel does not exist in this environment"
        case .cannotCreateChannelConfig: "the app has reached its channel limit (10,000 per environment): delete unused channels"
        case .featureNotEnabled: "the broadcast capability is not enabled for this bundle id"
        case .badMessageStoragePolicy: "the message storage policy must be 0 (no-storage) or 1 (most-recent)"
        case .invalidPushType: "channels and broadcasts take Live Activity pushes only"
        case .badExpirationDate: "apns-expiration is invalid (a no-storage channel takes only 0)"
        case .badPriority: "Live Activity pushes take priority 5 or 10"
        case .badMessageId: "apns-request-id is not a UUID"
        case .duplicateHeaders: "a header was repeated"
        case .payloadEmpty: "the request body is empty"
        case .payloadTooLarge: "the payload is larger than APNs allows (4096 bytes)"
        case .topicDisallowed: "these credentials may not manage or broadcast for this bundle id"
        case .badCertificate: "APNs refused the client certificate"
        case .badCertificateEnvironment: "the client certificate is for the other environment"
        case .expiredProviderToken: "the provider token is too old, even after a refresh: check this server's clock"
        case .invalidProviderToken: "the provider token does not verify: check the .p8 key, key id and team id"
        case .missingProviderToken: "no client certificate and no provider token were sent"
        case .forbidden: "the action is not allowed"
        case .badPath: "this endpoint does not serve the request path: check channelEndpoint / broadcastEndpoint"
        case .methodNotAllowed: "the endpoint does not accept this method on this path"
        case .tooManyRequests, .tooManyProviderTokenUpdates: "APNs throttled the requests; retried without success"
        case .internalServerError: "APNs failed internally; retried without success"
        case .serviceUnavailable, .shutdown: "APNs is unavailable; retried without success"
        case .unknown("BadPayload"): "the body is not a valid Live Activity payload or channel request"
        case .unknown: "a reason this version does not know (HTTP \(status))"
        default: "HTTP \(status)"
        }
    }
}
