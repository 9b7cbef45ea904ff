/// One app's APNs service (`apps.ID.apns`, or the flat APNs keys at the app's top level in files written before the
/// section existed): what shapes its requests and credentials. What applies to the app's traffic as a whole
/// (keys, window, connections, outage limit) stays in ``AppSettings``.
public struct APNsSettings: Sendable, Equatable {
    /// The bundle id; push types that need a suffix (`.voip`, …) get it added.
    public var topic: String
    /// Where notifications go.
    public var endpoint: APNsEndpoint
    /// Where broadcast channel management (`/1/apps/…/channels`) goes (`channelEndpoint`), or nil for
    /// the default: Apple's channel-management host of the request's environment when ``endpoint`` is
    /// `production` or `development`, the simulator when it is `simulator`, the same URL when it is a URL.
    /// With `production` / `development` here too, the host follows the request's environment.
    public var channelEndpoint: APNsEndpoint?
    /// Where broadcast sends (`/4/broadcasts/apps/…`) go (`broadcastEndpoint`), or nil for ``endpoint``.
    /// Apple's hosts are chosen per the request's environment, as for device sends.
    public var broadcastEndpoint: APNsEndpoint?
    /// An extra trust anchor (PEM) for the endpoint. TLS verification is never switched off.
    public var caFile: String?
    /// Credentials.
    public var auth: AuthSettings
    /// An override of the payload byte limit (e.g. 2048 to mimic older iOS limits).
    public var payloadLimit: Int?

    /// The keys of an `apps.ID.apns` section; in the flat form of older files they sit at the app's top level.
    public static let keys = ["topic", "endpoint", "channelEndpoint", "broadcastEndpoint", "caFile", "auth", "payloadLimit"]

    /// Creates APNs settings.
    public init(
        topic: String, endpoint: APNsEndpoint, caFile: String? = nil, auth: AuthSettings, payloadLimit: Int? = nil,
        channelEndpoint: APNsEndpoint? = nil, broadcastEndpoint: APNsEndpoint? = nil
    ) {
        self.topic = topic
        self.endpoint = endpoint
        self.caFile = caFile
        self.auth = auth
        self.payloadLimit = payloadLimit
        self.channelEndpoint = channelEndpoint
        self.broadcastEndpoint = broadcastEndpoint
    }

    /// The environment a token gets when registration names none.
    public var defaultEnvironment: APNsEnvironment { endpoint.impliedEnvironment ?? .production }

    /// ``channelEndpoint`` or, when unset, ``endpoint`` (whose Apple values then mean Apple's
    /// channel-management hosts).
    public var effectiveChannelEndpoint: APNsEndpoint { channelEndpoint ?? endpoint }

    /// ``broadcastEndpoint`` or, when unset, ``endpoint``.
    public var effectiveBroadcastEndpoint: APNsEndpoint { broadcastEndpoint ?? endpoint }

    /// The `apns-topic` of a notification of `pushType`: the bundle id with the suffix the push type needs.
    public func topic(for pushType: PushType) -> String { pushType.topic(bundleId: topic) }
}
