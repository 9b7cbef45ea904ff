/// One device a broadcast pass sends to.
public struct DeliveryTarget: Sendable, Equatable {
    /// The device's key (an APNs token, or a Web Push device's ``DeviceToken`` derived from its endpoint).
    public var token: DeviceToken
    /// The environment it registered in (routes to Apple's production or sandbox host), when known.
    public var environment: APNsEnvironment?
    /// Its locale, read when the job has per-locale text (nil otherwise, or when it has none).
    public var locale: String?
    /// The push service it belongs to (APNs for a token the registry does not hold: an explicit list's stranger).
    public var service: PushService
    /// Its subscription, for a Web Push device (nil otherwise).
    public var webPush: WebPushSubscription?
    /// The token a token-addressed service sends to (nil otherwise): an FCM device's registration token (what FCM's
    /// `message.token` names), an HMS device's push token (Push Kit's `message.token[]`). The key is its digest
    /// (`DeviceKey.fcm(token:)`, `DeviceKey.hms(token:)`).
    public var registrationToken: String?

    /// Creates a target.
    public init(
        token: DeviceToken, environment: APNsEnvironment?, locale: String? = nil, service: PushService = .apns,
        webPush: WebPushSubscription? = nil, registrationToken: String? = nil
    ) {
        self.token = token
        self.environment = environment
        self.locale = locale
        self.service = service
        self.webPush = webPush
        self.registrationToken = registrationToken
    }
}

/// Which devices a run's pass goes through.
public enum DeliveryPass: String, Sendable, Equatable {
    /// Every targeted device from the checkpoint on, in token order.
    case main
    /// Devices deferred by earlier runs, in token order.
    case retry
}
