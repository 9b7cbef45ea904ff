/// A browser's push subscription, exactly as `PushSubscription.toJSON()` gives it (Push API §
/// PushSubscriptionJSON): `{"endpoint":"https://…","expirationTime":null,"keys":{"p256dh":"…","auth":"…"}}`.
///
/// Parsing is strict, because the API stores what it accepts: unknown fields are refused (at both levels), the
/// endpoint must pass ``WebPushHostPolicy``, and the keys must have their RFC 8291 form — `p256dh` an uncompressed
/// P-256 point (65 bytes starting 0x04) and `auth` 16 bytes, both base64url (unpadded as browsers send them;
/// correctly padded also accepted, since some server libraries write it so). Whether `p256dh` is a point on the
/// curve is cryptography, judged by the sender (`WebPushEncryption`), not here.
public struct WebPushSubscription: Sendable, Hashable {
    /// The length of an uncompressed P-256 point (0x04 || X || Y).
    public static let p256dhLength = 65
    /// The length of the authentication secret.
    public static let authLength = 16

    /// Where to send: the push service's URL for this subscription. Its identity.
    public let endpoint: WebPushEndpoint
    /// The browser's ECDH public key (uncompressed P-256 point).
    public let p256dh: [UInt8]
    /// The browser's authentication secret.
    public let auth: [UInt8]
    /// When the push service will end the subscription (ms since 1970), when it says; nil otherwise.
    public let expirationTime: Int64?

    /// A subscription from parts already checked for form (e.g. read back from storage); the endpoint is not
    /// judged against a host policy here.
    public init(endpoint: WebPushEndpoint, p256dh: [UInt8], auth: [UInt8], expirationTime: Int64? = nil) throws(FieldError) {
        try Self.checkKeys(p256dh: p256dh, auth: auth, prefix: "")
        self.endpoint = endpoint
        self.p256dh = p256dh
        self.auth = auth
        self.expirationTime = expirationTime
    }

    /// The keys' RFC 8291 form: lengths and the uncompressed point's first byte.
    private static func checkKeys(p256dh: [UInt8], auth: [UInt8], prefix: String) throws(FieldError) {
        guard p256dh.count == p256dhLength, p256dh.first == 0x04 else {
            throw FieldError(
                field: prefix + "keys.p256dh",
                message: "\(prefix)keys.p256dh must be an uncompressed P-256 public key (65 bytes starting 0x04), not \(p256dh.count) bytes")
        }
        guard auth.count == authLength else {
            throw FieldError(field: prefix + "keys.auth", message: "\(prefix)keys.auth must be 16 bytes, not \(auth.count)")
        }
    }

    /// Parses the JSON a browser's `PushSubscription.toJSON()` gives and judges its endpoint with `policy`.
    /// Errors name the field with `prefix` before it (`subscription.` in the API's body).
    public init(json: JSONValue, policy: WebPushHostPolicy, prefix: String = "") throws(FieldError) {
        try self.init(json: json, prefix: prefix) { (text) throws(FieldError) in
            let endpoint = try WebPushEndpoint(parsing: text, field: prefix + "endpoint")
            try policy.check(endpoint, field: prefix + "endpoint")
            return endpoint
        }
    }

    /// Parses a UnifiedPush endpoint and its keys in the same JSON form (`{"endpoint", "keys": {"p256dh", "auth"}}`:
    /// what the Android connector library gives, `PushEndpoint.url` and its `pubKeySet`), judging the endpoint by
    /// SERV_1.2.0 — `http` or `https`, at most 1000 bytes — and by `policy`'s address rule.
    public init(json: JSONValue, unifiedPush policy: UnifiedPushHostPolicy, prefix: String = "") throws(FieldError) {
        try self.init(json: json, prefix: prefix) { (text) throws(FieldError) in
            let field = prefix + "endpoint"
            guard text.utf8.count <= UnifiedPushSettings.maximumEndpointLength else {
                throw FieldError(
                    field: field,
                    message: "\(field) must be at most \(UnifiedPushSettings.maximumEndpointLength) bytes (SERV_1.2.0), not \(text.utf8.count)")
            }
            let endpoint = try WebPushEndpoint(parsing: text, field: field, allowingHTTP: true)
            try policy.check(endpoint, field: field)
            return endpoint
        }
    }

    /// The JSON walk both forms share; `parseEndpoint` parses and judges the endpoint's text.
    private init(
        json: JSONValue, prefix: String, parseEndpoint: (String) throws(FieldError) -> WebPushEndpoint
    ) throws(FieldError) {
        func refuse(_ field: String, _ why: String) -> FieldError { FieldError(field: prefix + field, message: prefix + field + " " + why) }
        let whole = prefix.isEmpty ? "subscription" : String(prefix.dropLast())
        guard let pairs = json.objectPairs else {
            throw FieldError(field: whole, message: "\(whole) must be a JSON object (what PushSubscription.toJSON() gives)")
        }
        var endpointText: String?
        var keys: [(String, JSONValue)]?
        var expiration: Int64?
        for (key, value) in pairs {
            switch key {
            case "endpoint":
                guard let text = value.stringValue else { throw refuse("endpoint", "must be a string") }
                endpointText = text
            case "expirationTime":
                switch value {
                case .null: expiration = nil
                case .int(let ms) where ms >= 0: expiration = ms
                case .double(let ms) where ms >= 0 && ms < 1e15: expiration = Int64(ms.rounded(.down))
                default: throw refuse("expirationTime", "must be null or a time in ms since 1970")
                }
            case "keys":
                guard let object = value.objectPairs else { throw refuse("keys", "must be an object with p256dh and auth") }
                keys = object
            default:
                throw refuse(key, "is not a field of a push subscription (endpoint, expirationTime, keys)")
            }
        }
        guard let endpointText else { throw refuse("endpoint", "is required") }
        guard let keys else { throw refuse("keys", "is required (p256dh and auth)") }
        let endpoint = try parseEndpoint(endpointText)
        var p256dh: [UInt8]?
        var auth: [UInt8]?
        for (key, value) in keys {
            guard key == "p256dh" || key == "auth" else { throw refuse("keys.\(key)", "is not a subscription key (p256dh, auth)") }
            guard let text = value.stringValue, let bytes = Base64URL.decode(text) else {
                throw refuse("keys.\(key)", "must be a base64url string")
            }
            if key == "p256dh" { p256dh = bytes } else { auth = bytes }
        }
        guard let p256dh else { throw refuse("keys.p256dh", "is required") }
        guard let auth else { throw refuse("keys.auth", "is required") }
        try Self.checkKeys(p256dh: p256dh, auth: auth, prefix: prefix)
        self.endpoint = endpoint
        self.p256dh = p256dh
        self.auth = auth
        expirationTime = expiration
    }

    /// Parses the subscription's JSON text (see ``init(json:policy:prefix:)``).
    public init(parsing text: String, policy: WebPushHostPolicy) throws(FieldError) {
        let json: JSONValue
        do {
            json = try JSONValue(parsing: text)
        } catch {
            throw FieldError(field: "subscription", message: "subscription is not JSON: \(error)")
        }
        try self.init(json: json, policy: policy)
    }

    /// The subscription as `PushSubscription.toJSON()` writes it (keys unpadded).
    public var json: JSONValue {
        .object([
            ("endpoint", .string(endpoint.url)),
            ("expirationTime", expirationTime.map { .int($0) } ?? .null),
            ("keys", .object([("p256dh", .string(Base64URL.encode(p256dh))), ("auth", .string(Base64URL.encode(auth)))])),
        ])
    }
}
