import PushCore

/// A push subscription the simulator's Web Push service minted: what a browser's `PushSubscription.toJSON()` gives
/// a web app; or an endpoint its UnifiedPush distributor registered: what a UnifiedPush connector library gives an
/// Android app. The simulator plays the browser's (the distributor's) side too, so it keeps the private key and
/// decrypts what is sent.
public struct MintedSubscription: Sendable, Equatable {
    /// The opaque id in the endpoint's path (`/wp/<id>`, a UnifiedPush endpoint's `/up/<id>`).
    public let id: String
    /// The push resource: `https://<simulator host:port>/wp/<id>` (UnifiedPush: `…/up/<id>`).
    public let endpoint: String
    /// The subscription's P-256 public key (65 octets, uncompressed), base64url: `keys.p256dh`.
    public let p256dh: String
    /// The 16-byte authentication secret, base64url: `keys.auth`.
    public let auth: String
    /// The applicationServerKey (VAPID public key, base64url) the subscription is restricted to, or nil when any
    /// correctly signed key is accepted.
    public let applicationServerKey: String?

    /// The origin VAPID's `aud` must name: the endpoint's scheme, host and port.
    public var origin: String {
        let afterScheme = endpoint.dropFirst("https://".count)
        return "https://" + afterScheme.prefix(while: { $0 != "/" })
    }

    /// `PushSubscription.toJSON()`, compact, in the order browsers write it:
    /// `{"endpoint":…,"expirationTime":null,"keys":{"p256dh":…,"auth":…}}`.
    public var json: String {
        #"{"endpoint":"# + JSONValue.string(endpoint).encodedString + #","expirationTime":null,"keys":{"p256dh":""#
            + p256dh + #"","auth":""# + auth + #""}}"#
    }

    /// What a UnifiedPush connector library hands the app (the endpoint and its RFC 8291 keys), compact, as
    /// `POST /up/register` answers it: `{"endpoint":…,"keys":{"p256dh":…,"auth":…}}`.
    public var connectorJSON: String {
        #"{"endpoint":"# + JSONValue.string(endpoint).encodedString + #","keys":{"p256dh":""# + p256dh + #"","auth":""#
            + auth + #""}}"#
    }
}
