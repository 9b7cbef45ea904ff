/// An app's Huawei Push Kit settings for HarmonyOS NEXT (`apps.ID.harmonyos`): the AppGallery Connect project its
/// messages are sent for, the service-account key file that signs the JWT every request carries, where messages go,
/// and what Push Kit needs that our notifications do not carry (the category, a title) — docs/harmonyos.md.
public struct HarmonyOSSettings: Sendable, Equatable {
    /// Push Kit's send host (`POST /v3/{projectId}/messages:send`), the same as HMS Core's.
    public static let productionHost = "push-api.cloud.huawei.com"
    /// The service-account JWT's `aud` (Huawei, "Generating a JWT Based on a Service Account"): the token URI of
    /// Huawei's OAuth server, even though the JWT is sent as the bearer itself and never exchanged.
    public static let audience = "https://oauth-login.cloud.huawei.com/oauth2/v3/token"

    /// The notification categories Huawei documents for `payload.notification.category` (scenario API, request body
    /// parameters, "Notification"): service and communication (`IM` … `MAIL`) and `MARKETING`. `PLAY_VOICE` is for
    /// text-to-speech messages (push-type 2), which PushProvider does not send, so it is not accepted here.
    public static let categories: [String] = [
        "IM", "VOIP", "MISS_CALL", "SUBSCRIPTION", "TRAVEL", "HEALTH", "WORK", "ACCOUNT", "EXPRESS", "FINANCE",
        "DEVICE_REMINDER", "MAIL", "MARKETING",
    ]

    /// The AppGallery Connect project ID ("Project settings"): the `{projectId}` of the send URL; not a secret.
    public var projectId: String
    /// The service-account key file (JSON, downloaded from the API Console; a secret file, ``SecretFile``).
    public var serviceAccount: String
    /// Where messages go. Default `production`.
    public var endpoint: ServiceEndpoint
    /// An extra trust anchor (PEM) for the endpoint; never a switch to turn verification off.
    public var caFile: String?
    /// `payload.notification.category`, one of ``categories``. Required: without it Push Kit counts a notification as
    /// marketing, capped at a few per device per day; the category Huawei granted the app (its self-classification
    /// right) lifts that.
    public var category: String
    /// The title of a notification whose alert has none: Push Kit requires a title. Nil: such a notification is not
    /// sent to HarmonyOS devices, under a named reason.
    public var defaultTitle: String?

    /// Creates settings.
    public init(
        projectId: String, serviceAccount: String, endpoint: ServiceEndpoint = .production, caFile: String? = nil,
        category: String, defaultTitle: String? = nil
    ) {
        self.projectId = projectId
        self.serviceAccount = serviceAccount
        self.endpoint = endpoint
        self.caFile = caFile
        self.category = category
        self.defaultTitle = defaultTitle
    }

    /// True for a project ID as AppGallery Connect shows them (digits today): 1…64 bytes of `A–Z a–z 0–9 - _`, as it
    /// is a path segment of the URL.
    public static func isProjectId(_ text: String) -> Bool {
        (1...64).contains(text.utf8.count) && text.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "_"):
                true
            default: false
            }
        }
    }
}
