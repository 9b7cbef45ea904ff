/// `apps.ID.webhook`: where the app's backend hears which tokens died and which notifications finally failed.
public struct WebhookSettings: Sendable, Equatable {
    /// `https://…` (or `http://…` on a private network); TLS is verified.
    public var url: String
    /// The HMAC-SHA256 signing secret: a file's first line or an environment variable, never inline.
    public var secret: PasswordSource
    /// A trust anchor (PEM) for an `https://` receiver whose certificate a private CA signed, as `apps.ID.caFile`
    /// is for APNs: verification is never off.
    public var caFile: String?

    /// Creates the settings.
    public init(url: String, secret: PasswordSource, caFile: String? = nil) {
        self.url = url
        self.secret = secret
        self.caFile = caFile
    }
}
