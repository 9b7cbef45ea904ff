/// `apps.ID.webhook`: where the app's backend hears which tokens died and which notifications finally failed.
public struct WebhookSettings: Sendable, Equatable {
    /// `https://…` (or `http://…` on a private network); TLS is verified.
    public var url: String
    /// The HMAC-SHA256 signing secret: a file's first line or an environment variable, never inline.
    public var secret: PasswordSource

    /// Creates the settings.
    public init(url: String, secret: PasswordSource) {
        self.url = url
        self.secret = secret
    }
}
