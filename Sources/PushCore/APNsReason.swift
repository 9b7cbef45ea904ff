/// A reason string from an APNs error response (`{"reason": "BadDeviceToken"}`).
///
/// The set is open: Apple adds reasons, so anything unrecognised is kept as ``unknown(_:)``.
public enum APNsReason: Sendable, Hashable, CustomStringConvertible {
    case badCollapseId, badDeviceToken, badExpirationDate, badMessageId, badPriority, badTopic
    case deviceTokenNotForTopic, duplicateHeaders, idleTimeout, invalidPushType, missingDeviceToken
    case missingTopic, payloadEmpty, topicDisallowed
    case badCertificate, badCertificateEnvironment, expiredProviderToken, forbidden
    case invalidProviderToken, missingProviderToken, unrelatedKeyIdInToken, badEnvironmentKeyIdInToken
    case badPath, methodNotAllowed, expiredToken, unregistered, payloadTooLarge
    case tooManyProviderTokenUpdates, tooManyRequests, internalServerError, serviceUnavailable, shutdown
    /// Broadcast channels (iOS 18): channel management (`/1/apps/…`) and broadcast sends (`/4/broadcasts/…`).
    case missingChannelId, badChannelId, channelNotRegistered, cannotCreateChannelConfig, featureNotEnabled
    case badMessageStoragePolicy
    /// A reason this version does not know.
    case unknown(String)

    /// Every reason this version knows, in Apple's documentation order.
    public static let known: [APNsReason] = [
        .badCollapseId, .badDeviceToken, .badExpirationDate, .badMessageId, .badPriority, .badTopic,
        .deviceTokenNotForTopic, .duplicateHeaders, .idleTimeout, .invalidPushType, .missingDeviceToken,
        .missingTopic, .payloadEmpty, .topicDisallowed, .badCertificate, .badCertificateEnvironment,
        .expiredProviderToken, .forbidden, .invalidProviderToken, .missingProviderToken,
        .unrelatedKeyIdInToken, .badEnvironmentKeyIdInToken, .badPath, .methodNotAllowed, .expiredToken,
        .unregistered, .payloadTooLarge, .tooManyProviderTokenUpdates, .tooManyRequests,
        .internalServerError, .serviceUnavailable, .shutdown,
        .missingChannelId, .badChannelId, .channelNotRegistered, .cannotCreateChannelConfig, .featureNotEnabled,
        .badMessageStoragePolicy,
    ]

    /// Parses Apple's reason string.
    public init(rawValue: String) {
        self = Self.byName[rawValue] ?? .unknown(rawValue)
    }

    private static let byName: [String: APNsReason] = {
        var map: [String: APNsReason] = [:]
        for reason in known { map[reason.rawValue] = reason }
        return map
    }()

    /// Apple's reason string.
    public var rawValue: String {
        switch self {
        case .badCollapseId: "BadCollapseId"
        case .badDeviceToken: "BadDeviceToken"
        case .badExpirationDate: "BadExpirationDate"
        case .badMessageId: "BadMessageId"
        case .badPriority: "BadPriority"
        case .badTopic: "BadTopic"
        case .deviceTokenNotForTopic: "DeviceTokenNotForTopic"
        case .duplicateHeaders: "DuplicateHeaders"
        case .idleTimeout: "IdleTimeout"
        case .invalidPushType: "InvalidPushType"
        case .missingDeviceToken: "MissingDeviceToken"
        case .missingTopic: "MissingTopic"
        case .payloadEmpty: "PayloadEmpty"
        case .topicDisallowed: "TopicDisallowed"
        case .badCertificate: "BadCertificate"
        case .badCertificateEnvironment: "BadCertificateEnvironment"
        case .expiredProviderToken: "ExpiredProviderToken"
        case .forbidden: "Forbidden"
        case .invalidProviderToken: "InvalidProviderToken"
        case .missingProviderToken: "MissingProviderToken"
        case .unrelatedKeyIdInToken: "UnrelatedKeyIdInToken"
        case .badEnvironmentKeyIdInToken: "BadEnvironmentKeyIdInToken"
        case .badPath: "BadPath"
        case .methodNotAllowed: "MethodNotAllowed"
        case .expiredToken: "ExpiredToken"
        case .unregistered: "Unregistered"
        case .payloadTooLarge: "PayloadTooLarge"
        case .tooManyProviderTokenUpdates: "TooManyProviderTokenUpdates"
        case .tooManyRequests: "TooManyRequests"
        case .internalServerError: "InternalServerError"
        case .serviceUnavailable: "ServiceUnavailable"
        case .shutdown: "Shutdown"
        case .missingChannelId: "MissingChannelId"
        case .badChannelId: "BadChannelId"
        case .channelNotRegistered: "ChannelNotRegistered"
        case .cannotCreateChannelConfig: "CannotCreateChannelConfig"
        case .featureNotEnabled: "FeatureNotEnabled"
        case .badMessageStoragePolicy: "BadMessageStoragePolicy"
        case .unknown(let s): s
        }
    }

    /// The HTTP status Apple pairs with this reason.
    public var status: Int {
        switch self {
        case .badCollapseId, .badDeviceToken, .badExpirationDate, .badMessageId, .badPriority, .badTopic,
             .deviceTokenNotForTopic, .duplicateHeaders, .idleTimeout, .invalidPushType,
             .missingDeviceToken, .missingTopic, .payloadEmpty, .topicDisallowed:
            400
        // Apple's channel and broadcast error table pairs every channel reason with 400 (see docs/channels-wire.md).
        case .missingChannelId, .badChannelId, .channelNotRegistered, .cannotCreateChannelConfig, .featureNotEnabled,
             .badMessageStoragePolicy:
            400
        case .badCertificate, .badCertificateEnvironment, .expiredProviderToken, .forbidden,
             .invalidProviderToken, .missingProviderToken, .unrelatedKeyIdInToken,
             .badEnvironmentKeyIdInToken:
            403
        case .badPath: 404
        case .methodNotAllowed: 405
        case .expiredToken, .unregistered: 410
        case .payloadTooLarge: 413
        case .tooManyProviderTokenUpdates, .tooManyRequests: 429
        case .internalServerError: 500
        case .serviceUnavailable, .shutdown: 503
        case .unknown: 400
        }
    }

    /// The reason string.
    public var description: String { rawValue }
}
