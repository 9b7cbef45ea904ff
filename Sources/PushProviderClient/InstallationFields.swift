import Foundation

/// Everything the server keeps about this installation, as one value: what the app wants stored (`desired`) and
/// what the server last acknowledged (`acknowledged`) are both of this type, so "what changed" is a comparison of
/// two values rather than a log of edits — which is what makes `save()` idempotent and lets any number of offline
/// changes collapse into one request.
public struct InstallationFields: Sendable, Equatable, Codable {
    /// The APNs device token, lowercase hex (nil until APNs hands one out).
    public var token: String?
    /// The app's id for this install (the id its push-to-start tokens carry).
    public var installation: String?
    /// Channels the device is subscribed to, sorted.
    public var channels: [String]
    /// The APNs environment, or nil for the app's default on the server.
    public var environment: APNsEnvironment?
    /// The logged-in user, or nil.
    public var user: String?
    /// The proof for `user` from the app's backend (lowercase hex HMAC-SHA256 of the user id under the app's
    /// user secret).
    public var userAuth: String?
    /// An IANA time zone name.
    public var timeZone: String?
    /// A BCP 47 language tag.
    public var locale: String?
    /// The app's version.
    public var appVersion: String?
    /// The OS version.
    public var osVersion: String?
    /// The app's own segments.
    public var tags: [String: TagValue]

    /// Creates one.
    public init(
        token: String? = nil, installation: String? = nil, channels: [String] = [], environment: APNsEnvironment? = nil,
        user: String? = nil, userAuth: String? = nil, timeZone: String? = nil, locale: String? = nil,
        appVersion: String? = nil, osVersion: String? = nil, tags: [String: TagValue] = [:]
    ) {
        self.token = token
        self.installation = installation
        self.channels = Array(Set(channels)).sorted()
        self.environment = environment
        self.user = user
        self.userAuth = userAuth
        self.timeZone = timeZone
        self.locale = locale
        self.appVersion = appVersion
        self.osVersion = osVersion
        self.tags = tags
    }
}
