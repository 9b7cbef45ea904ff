import PushCore

/// A device's service and address as both backends store them: `service` ('apns', 'webpush', 'fcm') and
/// `subscription`: a Web Push device's subscription (a UnifiedPush device's endpoint and keys in the same form) as `PushSubscription.toJSON()` writes it, an FCM device's
/// registration token verbatim, NULL for APNs (whose key is its token). One text column keeps the row compact.
enum StoredSubscription {
    /// The column value for `subscription`.
    static func encode(_ subscription: WebPushSubscription?) -> String? { subscription?.json.encodedString }

    /// The service and subscription a row holds. What was stored passed registration, so the endpoint is not judged
    /// against a host policy again (the transport judges every address before connecting). A service name this
    /// build does not know reads as APNs' and an unreadable subscription as none: the CHECK constraint and the
    /// registration path rule both out, and the sender answers a Web Push target without one as a permanent failure.
    static func decode(
        service: String?, subscription: String?
    ) -> (service: PushService, webPush: WebPushSubscription?, registrationToken: String?) {
        let service = service.flatMap(PushService.init(rawValue:)) ?? .apns
        guard let subscription else { return (service, nil, nil) }
        switch service {
        case .apns: return (service, nil, nil)
        case .webpush: return (service, parse(subscription, allowingHTTP: false), nil)
        case .unifiedpush: return (service, parse(subscription, allowingHTTP: true), nil)
        case .fcm, .hms, .harmonyos: return (service, nil, subscription)
        }
    }

    private static func parse(_ text: String, allowingHTTP: Bool) -> WebPushSubscription? {
        guard let json = try? JSONValue(parsing: text), let pairs = json.objectPairs else { return nil }
        var endpoint: String?
        var expiration: Int64?
        var p256dh: [UInt8]?
        var auth: [UInt8]?
        for (key, value) in pairs {
            switch key {
            case "endpoint": endpoint = value.stringValue
            case "expirationTime": if case .int(let ms) = value { expiration = ms }
            case "keys":
                for (name, key) in value.objectPairs ?? [] {
                    let bytes = key.stringValue.flatMap { Base64URL.decode($0) }
                    if name == "p256dh" { p256dh = bytes } else if name == "auth" { auth = bytes }
                }
            default: break
            }
        }
        guard let endpoint, let p256dh, let auth, let parsed = try? WebPushEndpoint(parsing: endpoint, allowingHTTP: allowingHTTP) else { return nil }
        return try? WebPushSubscription(endpoint: parsed, p256dh: p256dh, auth: auth, expirationTime: expiration)
    }
}

extension DeliveryTarget {
    /// A target from a device row's columns, on either backend (a NULL environment: no registered device).
    init(storedToken: String, environment: String?, locale: String? = nil, service: String?, subscription: String?) {
        let (service, webPush, registrationToken) = StoredSubscription.decode(service: service, subscription: subscription)
        self.init(
            token: DeviceToken(trustedCanonicalHex: storedToken), environment: environment.flatMap(APNsEnvironment.init(rawValue:)),
            locale: locale, service: service, webPush: webPush, registrationToken: registrationToken)
    }
}

extension RegisteredDevice {
    /// Sets the service and subscription from a device row's columns.
    mutating func setService(_ service: String?, subscription: String?) {
        (self.service, webPush, registrationToken) = StoredSubscription.decode(service: service, subscription: subscription)
    }
}
