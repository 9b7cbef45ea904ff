import Foundation

/// Where an app's installation registers, and with which key. It holds a *registration* key only — the kind made
/// to ship inside apps (`pushctl apikey new --kind registration`), which may register and unregister but never
/// send, count or read — so nothing an attacker pulls out of the app binary lets them reach anyone's devices.
public struct ClientConfiguration: Sendable, Equatable {
    /// The server's public listener, e.g. `https://push.example.com` (a path prefix is kept: a reverse proxy may
    /// mount the API under one).
    public var serverURL: URL
    /// The app's id in the server's configuration (`apps.ID`).
    public var app: String
    /// A registration key of that app, sent as `Authorization: Bearer <key>`.
    public var registrationKey: String
    /// How long one HTTP request may take before it counts as a network failure (and is retried).
    public var requestTimeout: TimeInterval

    /// Creates one.
    public init(serverURL: URL, app: String, registrationKey: String, requestTimeout: TimeInterval = 30) {
        self.serverURL = serverURL
        self.app = app
        self.registrationKey = registrationKey
        self.requestTimeout = requestTimeout
    }

    /// `serverURL` + `/v1/apps/{app}/` + the components, each percent-encoded as one path segment (an activity
    /// id may hold `/` or `?`).
    func url(_ components: [String]) -> URL {
        var base = serverURL.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        let segments = (["v1", "apps", app] + components).map { $0.addingPercentEncoding(withAllowedCharacters: unreserved) ?? $0 }
        return URL(string: base + "/" + segments.joined(separator: "/"))!
    }
}
