import PushCore

/// One device in the registry, as streamed for broadcasts and listed by the CLI.
public struct RegisteredDevice: Sendable, Equatable {
    /// The canonical token (also the registry's key within an app).
    public var token: DeviceToken
    /// The APNs environment the token belongs to.
    public var environment: APNsEnvironment
    /// Channel names, sorted and unique.
    public var channels: [String]
    /// When the token was first registered (ms since 1970).
    public var createdMs: Int64
    /// When the token was last registered (ms since 1970); gates 410 prunes.
    public var lastRegisteredMs: Int64
    /// When APNs last accepted a notification for it, if ever.
    public var lastSuccessMs: Int64?
    /// Its installation fields, where the read asked for them (``RegistryStore/installation(app:token:)``).
    public var installation = Installation()
    /// The push service it belongs to.
    public var service: PushService = .apns
    /// Its subscription, for a Web Push device (its `token` is then ``DeviceKey/webPush(endpointURL:)``).
    public var webPush: WebPushSubscription?
    /// Its FCM registration token (an FCM device only).
    public var registrationToken: String?

    /// Creates a device record.
    public init(
        token: DeviceToken, environment: APNsEnvironment, channels: [String], createdMs: Int64,
        lastRegisteredMs: Int64, lastSuccessMs: Int64?
    ) {
        self.token = token
        self.environment = environment
        self.channels = channels
        self.createdMs = createdMs
        self.lastRegisteredMs = lastRegisteredMs
        self.lastSuccessMs = lastSuccessMs
    }
}

/// Channel names: validation and the compact column form (`a,b,c`, sorted).
enum Channels {
    /// The most channels one device may have.
    static let maximumCount = 64
    /// The longest channel name, in bytes.
    static let maximumLength = 64

    /// Sorted unique names, or `.invalidInput` naming the bad one. Names are 1…64 characters of
    /// `A-Z a-z 0-9 . _ : -` so they are safe in URLs, logs and the comma-separated column.
    static func normalize(_ names: [String]) throws(StoreError) -> [String] {
        guard names.count <= maximumCount else {
            throw StoreError(.invalidInput, "a device may have at most \(maximumCount) channels, got \(names.count)")
        }
        let unique = Array(Set(names)).sorted()
        for name in unique { try validate(name) }
        return unique
    }

    /// Checks one channel name.
    static func validate(_ name: String) throws(StoreError) {
        let ok = !name.isEmpty && name.utf8.count <= maximumLength && name.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"),
                 UInt8(ascii: ":"), UInt8(ascii: "-"):
                return true
            default:
                return false
            }
        }
        guard ok else {
            throw StoreError(
                .invalidInput,
                "invalid channel name '\(name.prefix(80))': use 1…\(maximumLength) characters of A-Z a-z 0-9 . _ : -")
        }
    }

    /// The column form.
    static func encode(_ names: [String]) -> String { names.joined(separator: ",") }

    /// Parses the column form.
    static func decode(_ column: String) -> [String] {
        column.isEmpty ? [] : column.split(separator: ",").map(String.init)
    }
}
