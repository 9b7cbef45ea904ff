import PushCore

/// A request to register a Live Activity token: a push-to-start token for (installation, attributes type), or an
/// update token for one activity. A new token for the same installation and type, or the same activity,
/// replaces the old one (ActivityKit rotates them).
public struct LiveActivityRegistration: Sendable, Equatable {
    /// The app id.
    public var app: String
    /// The token.
    public var token: DeviceToken
    /// Push-to-start or update.
    public var kind: LiveActivityTokenKind
    /// The environment; nil means the app's default (callers pass it).
    public var environment: APNsEnvironment?
    /// Push-to-start: the installation it belongs to (required).
    public var installation: String?
    /// Push-to-start: the attributes type it starts (required). Update: optional, informational.
    public var attributesType: String?
    /// Update: the activity id (required).
    public var activityId: String?
    /// Push-to-start: registry channels to put it in (optional).
    public var channels: [String]?

    /// Creates a request.
    public init(
        app: String, token: DeviceToken, kind: LiveActivityTokenKind, environment: APNsEnvironment? = nil,
        installation: String? = nil, attributesType: String? = nil, activityId: String? = nil, channels: [String]? = nil
    ) {
        self.app = app
        self.token = token
        self.kind = kind
        self.environment = environment
        self.installation = installation
        self.attributesType = attributesType
        self.activityId = activityId
        self.channels = channels
    }

    /// The longest installation or activity id, in bytes.
    public static let maximumIdLength = 128

    /// What is wrong with the request, as one sentence naming the field, or nil when it is valid.
    public var problem: String? {
        switch kind {
        case .pushToStart:
            guard let installation else { return "a push-to-start token needs installation" }
            if let p = Self.idProblem(installation, "installation") { return p }
            guard let attributesType else { return "a push-to-start token needs attributesType" }
            if let p = Self.attributesTypeProblem(attributesType) { return p }
            if activityId != nil { return "activityId is for update tokens, not push-to-start tokens" }
        case .update:
            guard let activityId else { return "an update token needs activityId" }
            if let p = Self.idProblem(activityId, "activityId") { return p }
            if installation != nil { return "installation is for push-to-start tokens, not update tokens" }
            if channels != nil { return "channels are for push-to-start tokens, not update tokens" }
            if let attributesType, let p = Self.attributesTypeProblem(attributesType) { return p }
        }
        if let channels {
            do { _ = try Channels.normalize(channels) } catch { return error.message }
        }
        return nil
    }

    /// An installation or activity id: 1–128 printable ASCII characters without spaces.
    public static func idProblem(_ id: String, _ field: String) -> String? {
        guard !id.isEmpty, id.utf8.count <= maximumIdLength, id.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f }) else {
            return "\(field) must be 1-\(maximumIdLength) printable ASCII characters without spaces"
        }
        return nil
    }

    /// An ActivityKit attributes type name: a Swift identifier, optionally module-qualified (`A.B`), ≤ 128 bytes.
    public static func attributesTypeProblem(_ name: String) -> String? {
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        let ok = name.utf8.count <= 128 && parts.allSatisfy { part in
            guard let first = part.utf8.first, !(0x30...0x39).contains(first) else { return false }
            return part.utf8.allSatisfy { b in
                (0x30...0x39).contains(b) || (0x41...0x5a).contains(b) || (0x61...0x7a).contains(b) || b == UInt8(ascii: "_")
            }
        }
        return ok ? nil : "attributesType must be a Swift type name (letters, digits, _ and ., at most 128 bytes), not '\(name)'"
    }
}
