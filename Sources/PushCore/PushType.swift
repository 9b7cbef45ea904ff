/// The `apns-push-type` header.
public enum PushType: String, Sendable, CaseIterable, Codable {
    case alert, background, voip, complication, fileprovider, mdm, location, liveactivity
    case pushtotalk, widgets, controls

    /// The suffix Apple requires on `apns-topic` for this push type (empty when the bare bundle id is used).
    public var topicSuffix: String {
        switch self {
        case .voip: ".voip"
        case .complication: ".complication"
        case .fileprovider: ".pushkit.fileprovider"
        case .location: ".location-query"
        case .liveactivity: ".push-type.liveactivity"
        case .pushtotalk: ".voip-ptt"
        case .widgets: ".push-type.widgets"
        case .controls: ".push-type.controls"
        case .alert, .background, .mdm: ""
        }
    }

    /// The `apns-topic` of this push type for an app's bundle id: the suffix it needs, appended once. An empty bundle
    /// id stays empty (a request without a topic: the APNs sender sets its app's).
    public func topic(bundleId: String) -> String {
        topicSuffix.isEmpty || bundleId.isEmpty || bundleId.hasSuffix(topicSuffix) ? bundleId : bundleId + topicSuffix
    }

    /// The largest payload APNs accepts for this push type, in bytes.
    public var payloadLimit: Int { self == .voip ? 5120 : 4096 }

    /// Push types whose payload must be an `aps` with only `content-available: 1`.
    public var isSilent: Bool { self == .background }
}

/// The `apns-priority` header.
public enum PushPriority: Int, Sendable, CaseIterable, Codable {
    /// Deliver at once (alerts). An error for background pushes.
    case immediate = 10
    /// Deliver when power considerations allow (required for background pushes).
    case conserve = 5
    /// Prioritise the device's power above all else.
    case low = 1
}
