import Crypto
import PushCore

/// A registration as an app (the API's JSON or form body) or an import line (`tokens import --format jsonl`) states
/// it: the one parser both use, so the HTTP API and the CLI accept and refuse exactly the same things. Errors name
/// the field.
public struct RegistrationFields: Sendable, Equatable {
    /// The token to keep.
    public var token: DeviceToken
    /// The token it replaces, if any.
    public var oldToken: DeviceToken?
    /// The channels; nil keeps them.
    public var channels: [String]?
    /// The environment; nil keeps it (new devices: the app's default).
    public var environment: APNsEnvironment?
    /// The installation fields given.
    public var installation: InstallationUpdate
    /// The proof for `installation.user` (see ``UserAuth``), as given.
    public var userAuth: String?
    /// The Web Push subscription, for a Web Push device (`token` is then its key, ``DeviceKey/of(_:)``).
    public var subscription: WebPushSubscription?
    /// The registration token, for an FCM device (`token` is then its key, `DeviceKey.fcm(token:)`).
    public var fcmToken: FCMRegistrationToken?
    /// The push token, for an HMS device (`token` is then its key, `DeviceKey.hms(token:)`).
    public var hmsToken: HMSPushToken?
    /// The push token, for a HarmonyOS device (`token` is then its key, `DeviceKey.harmonyos(token:)`).
    public var harmonyosToken: HarmonyOSPushToken?
    /// The endpoint and keys, for a UnifiedPush device (`token` is then its key, `DeviceKey.unifiedPush(endpointURL:)`).
    /// Parsed and judged by form and literal address only: discovery, which needs the network, is the caller's
    /// (``UnifiedPushDiscovery`` in PushSender) before it stores.
    public var unifiedPush: WebPushSubscription?

    /// The push service the device belongs to.
    public var service: PushService {
        subscription != nil ? .webpush : fcmToken != nil ? .fcm : hmsToken != nil ? .hms : harmonyosToken != nil ? .harmonyos
            : unifiedPush != nil ? .unifiedpush : .apns
    }

    public init(
        token: DeviceToken, oldToken: DeviceToken? = nil, channels: [String]? = nil, environment: APNsEnvironment? = nil,
        installation: InstallationUpdate = InstallationUpdate(), userAuth: String? = nil
    ) {
        self.token = token
        self.oldToken = oldToken
        self.channels = channels
        self.environment = environment
        self.installation = installation
        self.userAuth = userAuth
    }

    /// The request to store for `app`; without an environment a new device gets `defaultEnvironment`.
    public func request(app: String, defaultEnvironment: APNsEnvironment?) -> RegistrationRequest {
        var request = RegistrationRequest(
            app: app, token: token, oldToken: oldToken, channels: channels, environment: environment ?? defaultEnvironment)
        request.installation = installation
        request.subscription = subscription
        request.fcmToken = fcmToken
        request.hmsToken = hmsToken
        request.harmonyosToken = harmonyosToken
        request.unifiedPush = unifiedPush
        return request
    }

    /// True when it names a user (not `null`): the caller must check the proof.
    public var claimsUser: Bool { installation.user.value != nil }

    /// Parses a JSON object: `{"token" (or "newToken"), "oldToken"?, "channels"?, "environment"?, "installation"?,
    /// "user"?, "userAuth"?, "timeZone"?, "locale"?, "appVersion"?, "osVersion"?, "tags"?}`; a Web Push device gives
    /// `"service": "webpush"` and `"subscription"` (what `PushSubscription.toJSON()` gives) instead of a token, and
    /// `"oldEndpoint"` (the replaced subscription's endpoint) instead of an old token. `webPush` is the app's host
    /// policy, nil when the app has no Web Push (a `webpush` registration is then refused, naming `service`).
    /// An Android device gives `"service": "fcm"`, its FCM registration token as `"token"` and the previous one as
    /// `"oldToken"` (``FCMRegistrationToken``: the key is `DeviceKey.fcm(token:)`). It needs no app configuration:
    /// unlike an endpoint, a token names no host to judge (a send to it without `apps.ID.fcm` is refused by name).
    ///
    /// A UnifiedPush device gives `"service": "unifiedpush"` and `"subscription": {"endpoint", "keys": {"p256dh",
    /// "auth"}}` (the connector library's endpoint and public key set), and `"oldEndpoint"` for the one it replaces;
    /// `unifiedPush` is the app's address rule, nil when the app has no UnifiedPush (refused, naming `service`).
    public static func parse(
        json: JSONValue, webPush: WebPushHostPolicy? = nil, unifiedPush: UnifiedPushHostPolicy? = nil
    ) throws(FieldError) -> RegistrationFields {
        guard let pairs = json.objectPairs else { throw FieldError(field: "json", message: "body must be a JSON object") }
        var token: String?, oldToken: String?, channels: [String]?, environment: String?, userAuth: String?
        var installation = InstallationUpdate()
        var service = PushService.apns, subscription: JSONValue?, oldEndpoint: String?
        for (key, value) in pairs {
            switch key {
            case "service":
                guard let s = value.stringValue, let named = PushService(rawValue: s) else {
                    throw FieldError(field: "service", message: "'service' must be apns, webpush, fcm, hms, harmonyos or unifiedpush")
                }
                service = named
            case "subscription": subscription = value
            case "oldEndpoint":
                if value == .null { continue }
                guard let s = value.stringValue else {
                    throw FieldError(field: "oldEndpoint", message: "'oldEndpoint' must be a string or null")
                }
                oldEndpoint = s
            case "token", "newToken":
                guard let s = value.stringValue else { throw FieldError(field: "token", message: "'\(key)' must be a string") }
                guard token == nil else { throw FieldError(field: "token", message: "give 'token' or 'newToken', not both") }
                token = s
            case "oldToken":
                if value == .null { continue }
                guard let s = value.stringValue else {
                    throw FieldError(field: "oldToken", message: "'oldToken' must be a string or null")
                }
                oldToken = s
            case "channels":
                guard case .array(let items) = value else {
                    throw FieldError(field: "channels", message: "'channels' must be an array of strings")
                }
                var names: [String] = []
                for item in items {
                    guard let s = item.stringValue else {
                        throw FieldError(field: "channels", message: "'channels' must be an array of strings")
                    }
                    names.append(s)
                }
                channels = names
            case "environment":
                guard let s = value.stringValue else {
                    throw FieldError(field: "environment", message: "'environment' must be a string")
                }
                environment = s
            case "userAuth":
                guard let s = value.stringValue else { throw FieldError(field: "userAuth", message: "'userAuth' must be a string") }
                userAuth = s
            default:
                guard InstallationUpdate.fieldNames.contains(key) else {
                    throw FieldError(field: "field", message: "unknown field '\(key)'")
                }
                try installation.set(key, json: value, zones: SystemTimeZones.names)
            }
        }
        if service == .webpush {
            guard token == nil, oldToken == nil else {
                throw FieldError(field: token != nil ? "token" : "oldToken", message: "a webpush device is named by its subscription (and oldEndpoint), not by a token")
            }
            guard let webPush else {
                throw FieldError(field: "service", message: "this app has no Web Push configured (apps.ID.webpush)")
            }
            guard let subscription else { throw FieldError(field: "subscription", message: "'subscription' is required with service webpush") }
            let parsed = try WebPushSubscription(json: subscription, policy: webPush, prefix: "subscription.")
            // The sender would fail on a point off the curve at every send: refuse it once, here.
            guard (try? P256.KeyAgreement.PublicKey(x963Representation: parsed.p256dh)) != nil else {
                throw FieldError(field: "subscription.keys.p256dh", message: "subscription.keys.p256dh is not a point on the P-256 curve")
            }
            if let oldEndpoint, oldEndpoint.isEmpty || oldEndpoint.utf8.count > WebPushEndpoint.maximumLength {
                throw FieldError(field: "oldEndpoint", message: "'oldEndpoint' must be the replaced subscription's endpoint URL")
            }
            var fields = try make(
                token: DeviceKey.of(parsed).hex, oldToken: oldEndpoint.map { DeviceKey.webPush(endpointURL: $0).hex }, channels: channels,
                environment: environment, installation: installation, userAuth: userAuth)
            fields.subscription = parsed
            return fields
        }
        if service == .unifiedpush {
            guard token == nil, oldToken == nil else {
                throw FieldError(
                    field: token != nil ? "token" : "oldToken",
                    message: "a unifiedpush device is named by its subscription's endpoint (and oldEndpoint), not by a token")
            }
            guard let unifiedPush else {
                throw FieldError(field: "service", message: "this app has no UnifiedPush configured (apps.ID.unifiedpush)")
            }
            guard let subscription else {
                throw FieldError(
                    field: "subscription", message: "'subscription' (the distributor's endpoint and the keys) is required with service unifiedpush")
            }
            let parsed = try WebPushSubscription(json: subscription, unifiedPush: unifiedPush, prefix: "subscription.")
            guard (try? P256.KeyAgreement.PublicKey(x963Representation: parsed.p256dh)) != nil else {
                throw FieldError(field: "subscription.keys.p256dh", message: "subscription.keys.p256dh is not a point on the P-256 curve")
            }
            if let oldEndpoint, oldEndpoint.isEmpty || oldEndpoint.utf8.count > UnifiedPushSettings.maximumEndpointLength {
                throw FieldError(field: "oldEndpoint", message: "'oldEndpoint' must be the replaced endpoint's URL")
            }
            var fields = try make(
                token: DeviceKey.unifiedPush(endpointURL: parsed.endpoint.url).hex,
                oldToken: oldEndpoint.map { DeviceKey.unifiedPush(endpointURL: $0).hex }, channels: channels,
                environment: environment, installation: installation, userAuth: userAuth)
            fields.unifiedPush = parsed
            return fields
        }
        // A token-addressed service (FCM, HMS, HarmonyOS): its token and the old one parsed by its form, keyed by
        // `DeviceKey`, kept in its field.
        func tokenFields<T>(
            _ name: String, parse: (String, String) throws(FieldError) -> T, key: (T) -> DeviceToken,
            keep: (inout RegistrationFields, T) -> Void
        ) throws(FieldError) -> RegistrationFields {
            guard let token else {
                throw FieldError(field: "token", message: "'token' (the \(name)) is required with service \(service.rawValue)")
            }
            let parsed = try parse(token, "token")
            let old = try oldToken.map { (text) throws(FieldError) in try parse(text, "oldToken") }
            var fields = try make(
                token: key(parsed).hex, oldToken: old.map { key($0).hex }, channels: channels,
                environment: environment, installation: installation, userAuth: userAuth)
            keep(&fields, parsed)
            return fields
        }
        if subscription == nil, oldEndpoint == nil {
            switch service {
            case .fcm:
                return try tokenFields(
                    "FCM registration token", parse: { (text, field) throws(FieldError) in try FCMRegistrationToken(parsing: text, field: field) },
                    key: { DeviceKey.of($0) }, keep: { $0.fcmToken = $1 })
            case .hms:
                return try tokenFields(
                    "HMS push token", parse: { (text, field) throws(FieldError) in try HMSPushToken(parsing: text, field: field) },
                    key: { DeviceKey.of($0) }, keep: { $0.hmsToken = $1 })
            case .harmonyos:
                return try tokenFields(
                    "HarmonyOS push token", parse: { (text, field) throws(FieldError) in try HarmonyOSPushToken(parsing: text, field: field) },
                    key: { DeviceKey.of($0) }, keep: { $0.harmonyosToken = $1 })
            case .apns, .webpush, .unifiedpush:
                break
            }
        }
        guard subscription == nil, oldEndpoint == nil else {
            throw FieldError(
                field: subscription != nil ? "subscription" : "oldEndpoint",
                message: "'\(subscription != nil ? "subscription" : "oldEndpoint")' is for service webpush or unifiedpush")
        }
        return try make(
            token: token, oldToken: oldToken, channels: channels, environment: environment, installation: installation,
            userAuth: userAuth)
    }

    /// Checks and assembles the parts (tokens parsed, `(null)` old tokens read as none, channel names checked).
    public static func make(
        token: String?, oldToken: String?, channels: [String]?, environment: String?,
        installation: InstallationUpdate = InstallationUpdate(), userAuth: String? = nil
    ) throws(FieldError) -> RegistrationFields {
        guard let token else { throw FieldError(field: "token", message: "'token' (or 'newToken') is required") }
        let parsed: DeviceToken
        do { parsed = try DeviceToken(parsing: token) } catch {
            throw FieldError(field: "token", message: "token: \(error.description)")
        }
        let old: DeviceToken?
        do { old = try RegistrationRequest.parseOldToken(oldToken) } catch {
            throw FieldError(field: "oldToken", message: "oldToken: \(error.description)")
        }
        var env: APNsEnvironment?
        if let environment, !environment.isEmpty {
            guard let e = APNsEnvironment(rawValue: environment) else {
                throw FieldError(field: "environment", message: "environment must be development or production")
            }
            env = e
        }
        if let channels {
            do { _ = try Channels.normalize(channels) } catch { throw FieldError(field: "channels", message: error.message) }
        }
        if userAuth != nil, installation.user.value == nil {
            throw FieldError(field: "userAuth", message: "'userAuth' proves a 'user'; give the user it was made for")
        }
        return RegistrationFields(
            token: parsed, oldToken: old, channels: channels, environment: env, installation: installation, userAuth: userAuth)
    }
}
