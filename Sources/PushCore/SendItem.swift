/// One notification to send, with the environment its token was registered in (used to route to Apple's
/// production or sandbox host; ignored for the simulator and URL endpoints), or the Web Push subscription of a web
/// device.
public struct SendItem: Sendable {
    /// The notification, as the engine prepared it (for a web device too: its APNs-form payload, push type, priority,
    /// expiration, collapse id and apns-id, which ``WebPushSender`` maps).
    public var request: NotificationRequest
    /// The token's registered environment, when known.
    public var environment: APNsEnvironment?
    /// The web device's subscription; nil for an APNs device.
    public var webPush: WebPushSubscription?
    /// The FCM device's registration token or the HMS device's push token; nil for other services.
    public var registrationToken: String?
    /// The push service the device belongs to: what ``ServiceRouter`` routes by. Given by the registry, not guessed
    /// from the subscription, so a web device whose stored subscription cannot be read goes to the Web Push sender
    /// (which refuses it) and never to APNs as a token.
    public var service: PushService

    /// Creates an item; `service` defaults to the one `webPush` implies.
    public init(
        _ request: NotificationRequest, environment: APNsEnvironment? = nil, webPush: WebPushSubscription? = nil,
        service: PushService? = nil
    ) {
        self.request = request
        self.environment = environment
        self.webPush = webPush
        self.service = service ?? (webPush == nil ? .apns : .webpush)
    }

    /// The item for `request` to the device `target`: its environment, service and service address (subscription
    /// or FCM token) as the registry gave them.
    /// Set field by field: delegating to the other initializer and then setting `registrationToken` copied the whole item
    /// twice per device of a broadcast (callgrind).
    public init(_ request: NotificationRequest, target: DeliveryTarget) {
        self.request = request
        environment = target.environment
        webPush = target.webPush
        registrationToken = target.registrationToken
        service = target.service
    }
}
