import PushCore

/// One registration: what an app's `oldToken=…&newToken=…` POST asks for.
public struct RegistrationRequest: Sendable, Equatable {
    /// The app id.
    public var app: String
    /// The token to keep.
    public var token: DeviceToken
    /// The token it replaces (removed if present and different), or nil.
    public var oldToken: DeviceToken?
    /// The device's channels; nil keeps the existing ones (and carries over the old token's).
    public var channels: [String]?
    /// The environment; nil keeps the existing one (or the old token's), else `production`.
    /// Callers usually pass the app's `defaultEnvironment`.
    public var environment: APNsEnvironment?
    /// The installation fields given (left out: kept; see ``InstallationUpdate``). `user` must have been proven
    /// by the caller (``UserAuth``): the store takes what it is given.
    public var installation = InstallationUpdate()
    /// The Web Push subscription, for a Web Push device (nil: an APNs token). `token` is then its key
    /// (``DeviceKey/of(_:)``) and `oldToken` the key of the old subscription's endpoint.
    public var subscription: WebPushSubscription?
    /// The registration token, for an FCM device (nil: not one). `token` is then its key (`DeviceKey.fcm(token:)`)
    /// and `oldToken` the key of the old registration token.
    public var fcmToken: FCMRegistrationToken?
    /// The push token, for an HMS device (nil: not one). `token` is then its key (`DeviceKey.hms(token:)`) and
    /// `oldToken` the key of the old push token.
    public var hmsToken: HMSPushToken?
    /// The push token, for a HarmonyOS device (nil: not one). `token` is then its key (`DeviceKey.harmonyos(token:)`)
    /// and `oldToken` the key of the old push token.
    public var harmonyosToken: HarmonyOSPushToken?
    /// The endpoint and keys, for a UnifiedPush device (nil: not one). `token` is then its key
    /// (`DeviceKey.unifiedPush(endpointURL:)`) and `oldToken` the key of the old endpoint.
    public var unifiedPush: WebPushSubscription?

    /// The push service the device belongs to.
    public var service: PushService {
        subscription != nil ? .webpush : fcmToken != nil ? .fcm : hmsToken != nil ? .hms : harmonyosToken != nil ? .harmonyos
            : unifiedPush != nil ? .unifiedpush : .apns
    }

    /// What the `subscription` column holds (``StoredSubscription``): a Web Push subscription's (or UnifiedPush
    /// endpoint's) JSON, an FCM registration token or HMS push token verbatim, nil for APNs.
    var storedSubscription: String? {
        StoredSubscription.encode(subscription ?? unifiedPush) ?? fcmToken?.value ?? hmsToken?.value ?? harmonyosToken?.value
    }

    /// Creates a request.
    public init(
        app: String, token: DeviceToken, oldToken: DeviceToken? = nil, channels: [String]? = nil,
        environment: APNsEnvironment? = nil
    ) {
        self.app = app
        self.token = token
        self.oldToken = oldToken
        self.channels = channels
        self.environment = environment
    }

    /// Registers a Web Push subscription; `oldEndpoint` (in any spelling: ``DeviceKey/webPush(endpointURL:)``) names the
    /// subscription it replaces.
    public init(
        app: String, subscription: WebPushSubscription, oldEndpoint: String? = nil, channels: [String]? = nil,
        environment: APNsEnvironment? = nil
    ) {
        self.init(
            app: app, token: DeviceKey.of(subscription), oldToken: oldEndpoint.map(DeviceKey.webPush(endpointURL:)),
            channels: channels, environment: environment)
        self.subscription = subscription
    }

    /// Registers a UnifiedPush endpoint and its keys; `oldEndpoint` (in any spelling) names the endpoint it replaces.
    public init(
        app: String, unifiedPush: WebPushSubscription, oldEndpoint: String? = nil, channels: [String]? = nil,
        environment: APNsEnvironment? = nil
    ) {
        self.init(
            app: app, token: DeviceKey.unifiedPush(endpointURL: unifiedPush.endpoint.url),
            oldToken: oldEndpoint.map(DeviceKey.unifiedPush(endpointURL:)), channels: channels, environment: environment)
        self.unifiedPush = unifiedPush
    }

    /// Registers an Android app's FCM registration token; `oldToken` (the previous registration token, verbatim)
    /// names the device it replaces.
    public init(
        app: String, fcmToken: FCMRegistrationToken, oldToken: FCMRegistrationToken? = nil, channels: [String]? = nil,
        environment: APNsEnvironment? = nil
    ) {
        self.init(
            app: app, token: DeviceKey.of(fcmToken), oldToken: oldToken.map(DeviceKey.of), channels: channels,
            environment: environment)
        self.fcmToken = fcmToken
    }

    /// Registers an HMS Core app's push token; `oldToken` (the previous push token, verbatim) names the device it
    /// replaces.
    public init(
        app: String, hmsToken: HMSPushToken, oldToken: HMSPushToken? = nil, channels: [String]? = nil,
        environment: APNsEnvironment? = nil
    ) {
        self.init(
            app: app, token: DeviceKey.of(hmsToken), oldToken: oldToken.map(DeviceKey.of), channels: channels,
            environment: environment)
        self.hmsToken = hmsToken
    }

    /// Registers a HarmonyOS app's push token; `oldToken` (the previous push token, verbatim) names the device it
    /// replaces.
    public init(
        app: String, harmonyosToken: HarmonyOSPushToken, oldToken: HarmonyOSPushToken? = nil, channels: [String]? = nil,
        environment: APNsEnvironment? = nil
    ) {
        self.init(
            app: app, token: DeviceKey.of(harmonyosToken), oldToken: oldToken.map(DeviceKey.of), channels: channels,
            environment: environment)
        self.harmonyosToken = harmonyosToken
    }

    /// Refuses to register a device under a key held by a device of another service: a device belongs to one
    /// push service for its whole life (`role`: "token" or "old token", for the message).
    func checkService(stored: String, role: String, key: DeviceToken) throws(StoreError) {
        guard stored != service.rawValue else { return }
        throw StoreError(
            .constraint,
            "\(role) \(key.masked) is registered as a \(stored) device, not \(service.rawValue): a device belongs to one push service")
    }

    /// Parses an optional old token as clients send it: nil, empty, or `(null)` (what Objective-C's
    /// `%@` prints for nil) mean "none"; anything else must be a valid token.
    public static func parseOldToken(_ text: String?) throws(DeviceTokenError) -> DeviceToken? {
        guard let text else { return nil }
        // On bytes: "\r\n" is one Character, which a Character-based trim would keep.
        func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D }
        let bytes = Array(text.utf8)
        let trimmed = bytes.drop(while: isSpace).reversed().drop(while: isSpace).reversed()
        if trimmed.isEmpty || Array(trimmed) == Array("(null)".utf8) { return nil }
        return try DeviceToken(parsing: text)
    }
}

/// What a registration did.
public enum RegistrationOutcome: Sendable, Equatable {
    /// The token was new.
    case created
    /// The token was already registered; its last-registered time (and given fields) were refreshed.
    case updated
    /// The old token was present and removed; the new token is registered.
    case replaced(DeviceToken)
}

extension RegistrationOutcome {
    /// What a registration did — the rule both backends report, for devices and Live Activity tokens alike:
    /// replacing another token (`old`, removed) says so; otherwise the token is new or was refreshed.
    static func of(replacing old: DeviceToken?, created: Bool) -> RegistrationOutcome {
        if let old { return .replaced(old) }
        return created ? .created : .updated
    }
}

extension String {
    fileprivate func trimmingCharacters(in set: String) -> String {
        var s = Substring(self)
        while let f = s.first, set.contains(f) { s = s.dropFirst() }
        while let l = s.last, set.contains(l) { s = s.dropLast() }
        return String(s)
    }
}

extension RegistrationRequest {
    /// The token this request removes: its old token, when it is another one (the first step on both backends).
    var tokenToReplace: DeviceToken? { oldToken.flatMap { $0 != token ? $0 : nil } }

    /// The channels and environment a registration leaves the device with — the one rule both backends apply.
    /// `given` are the request's normalized channels; `existing` is the device already stored under the new
    /// token and `replaced` the old token's device this request removes, each as (environment, channels).
    /// Channels: the given ones; otherwise the old token's carried over (merged with the device's own); nil
    /// means keep what the device has. Environment: the request's, else the device's, else the old token's,
    /// else production.
    func resolved(
        channels given: [String]?, existing: (environment: String, channels: [String])?,
        replaced: (environment: String, channels: [String])?
    ) -> (channels: [String]?, environment: String) {
        var channels = given
        if channels == nil, let replaced, !replaced.channels.isEmpty {
            channels = Array(Set(replaced.channels).union(existing?.channels ?? [])).sorted()
        }
        let environment = environment?.rawValue ?? existing?.environment ?? replaced?.environment
            ?? APNsEnvironment.production.rawValue
        return (channels, environment)
    }
}
