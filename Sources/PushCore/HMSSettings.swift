/// An app's Huawei Push Kit settings for HMS Core (`apps.ID.hms`): the OAuth 2.0 client credentials of the app's
/// AppGallery Connect project, where messages go, and how its notifications are shaped where Push Kit needs what our
/// notifications do not carry (docs/hms.md).
public struct HMSSettings: Sendable, Equatable {
    /// Push Kit's send host (`POST /v1/{clientId}/messages:send`).
    public static let productionHost = "push-api.cloud.huawei.com"
    /// Huawei's OAuth 2.0 token endpoint in production (client-credentials grants).
    public static let productionTokenURL = "https://oauth-login.cloud.huawei.com/oauth2/v3/token"
    /// The path of the token endpoint on the simulator and on an `https://host:port` endpoint: Huawei's own.
    public static let tokenPath = "/oauth2/v3/token"

    /// The OAuth 2.0 client ID (AppGallery Connect, "Project settings": for HMS Core the app's App ID). It names the
    /// send URL and goes into every grant; not a secret.
    public var clientId: String
    /// The file holding the client secret (a secret file: same mode rules as a `.p8`, ``SecretFile``).
    public var clientSecretFile: String
    /// Where messages and grants go. Default `production`.
    public var endpoint: ServiceEndpoint
    /// An extra trust anchor (PEM) for the endpoint and its token endpoint; never a switch to turn verification off.
    public var caFile: String?
    /// `android.category`, Push Kit's self-classification of the app's messages (`IM`, `VOIP`, `SUBSCRIPTION`,
    /// `TRAVEL`, `HEALTH`, `WORK`, `ACCOUNT`, `EXPRESS`, `FINANCE`, `DEVICE_REMINDER`, `MAIL`, …), given only when
    /// set: Huawei caps unclassified and marketing messages per device per day, and grants a category per app on
    /// application; the value is passed as configured.
    public var category: String?
    /// The title of a notification whose alert has none (a string alert, a body alone): Push Kit shows no
    /// notification without a title. Nil: such a notification is not sent to HMS devices, under a named reason.
    public var defaultTitle: String?
    /// The full class name of the app's launcher activity (`com.example.app.MainActivity`): Push Kit's badge names
    /// it (`android.notification.badge.class`). Nil: `aps.badge` is not mapped.
    public var badgeClass: String?

    /// Creates settings.
    public init(
        clientId: String, clientSecretFile: String, endpoint: ServiceEndpoint = .production, caFile: String? = nil,
        category: String? = nil, defaultTitle: String? = nil, badgeClass: String? = nil
    ) {
        self.clientId = clientId
        self.clientSecretFile = clientSecretFile
        self.endpoint = endpoint
        self.caFile = caFile
        self.category = category
        self.defaultTitle = defaultTitle
        self.badgeClass = badgeClass
    }

    /// True for a client ID as AppGallery Connect issues them: 1…32 ASCII digits (it is a path segment of the URL).
    public static func isClientId(_ text: String) -> Bool {
        (1...32).contains(text.utf8.count) && text.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }
}
