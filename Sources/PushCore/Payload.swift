/// A notification payload: Apple's `aps` dictionary plus custom top-level keys.
public struct Payload: Sendable, Equatable {
    /// The `aps` dictionary.
    public var aps: APS
    /// Custom top-level keys in order (any JSON value). `aps` is reserved.
    public var custom: [(String, JSONValue)]

    /// Creates a payload.
    public init(aps: APS = APS(), custom: [(String, JSONValue)] = []) {
        self.aps = aps
        self.custom = custom
    }

    public static func == (lhs: Payload, rhs: Payload) -> Bool {
        lhs.aps == rhs.aps && JSONValue.object(lhs.custom) == JSONValue.object(rhs.custom)
    }

    /// The payload as a JSON object: `aps` first, then custom keys in order.
    public var json: JSONValue { .object([("aps", aps.json)] + custom) }
}

/// Apple's `aps` dictionary, typed. Nil fields are omitted from the JSON.
public struct APS: Sendable, Equatable {
    /// `alert`: a plain string or a dictionary.
    public var alert: Alert?
    /// `badge`: the number on the app icon (0 clears it).
    public var badge: Int?
    /// `sound`: a sound name, or the critical-alert dictionary.
    public var sound: Sound?
    /// `thread-id`: groups notifications.
    public var threadId: String?
    /// `category`: the notification category (actions).
    public var category: String?
    /// `content-available: 1`: wake the app in the background.
    public var contentAvailable: Bool
    /// `mutable-content: 1`: let a notification service extension modify the content.
    public var mutableContent: Bool
    /// `target-content-id`: the window or content to bring forward.
    public var targetContentId: String?
    /// `interruption-level`.
    public var interruptionLevel: InterruptionLevel?
    /// `relevance-score` (0…1).
    public var relevanceScore: Double?
    /// `filter-criteria` (Focus filters).
    public var filterCriteria: String?
    /// `stale-date` (epoch seconds; Live Activities).
    public var staleDate: Int64?
    /// `content-state` (Live Activities).
    public var contentState: JSONValue?
    /// `timestamp` (epoch seconds; Live Activities).
    public var timestamp: Int64?
    /// `event`: `start`, `update` or `end` (Live Activities).
    public var event: String?
    /// `dismissal-date` (epoch seconds; Live Activities).
    public var dismissalDate: Int64?

    /// Creates an `aps` dictionary; everything defaults to absent.
    public init(
        alert: Alert? = nil, badge: Int? = nil, sound: Sound? = nil, threadId: String? = nil,
        category: String? = nil, contentAvailable: Bool = false, mutableContent: Bool = false,
        targetContentId: String? = nil, interruptionLevel: InterruptionLevel? = nil,
        relevanceScore: Double? = nil, filterCriteria: String? = nil, staleDate: Int64? = nil,
        contentState: JSONValue? = nil, timestamp: Int64? = nil, event: String? = nil,
        dismissalDate: Int64? = nil
    ) {
        self.alert = alert
        self.badge = badge
        self.sound = sound
        self.threadId = threadId
        self.category = category
        self.contentAvailable = contentAvailable
        self.mutableContent = mutableContent
        self.targetContentId = targetContentId
        self.interruptionLevel = interruptionLevel
        self.relevanceScore = relevanceScore
        self.filterCriteria = filterCriteria
        self.staleDate = staleDate
        self.contentState = contentState
        self.timestamp = timestamp
        self.event = event
        self.dismissalDate = dismissalDate
    }

    /// True when the device would show or sound something (alert, sound or badge).
    public var isUserVisible: Bool { alert != nil || sound != nil || badge != nil }

    /// The dictionary as JSON, keys in Apple's documentation order.
    public var json: JSONValue {
        var pairs: [(String, JSONValue)] = []
        if let alert { pairs.append(("alert", alert.json)) }
        if let badge { pairs.append(("badge", .int(Int64(badge)))) }
        if let sound { pairs.append(("sound", sound.json)) }
        if let threadId { pairs.append(("thread-id", .string(threadId))) }
        if let category { pairs.append(("category", .string(category))) }
        if contentAvailable { pairs.append(("content-available", .int(1))) }
        if mutableContent { pairs.append(("mutable-content", .int(1))) }
        if let targetContentId { pairs.append(("target-content-id", .string(targetContentId))) }
        if let interruptionLevel { pairs.append(("interruption-level", .string(interruptionLevel.rawValue))) }
        if let relevanceScore { pairs.append(("relevance-score", .double(relevanceScore))) }
        if let filterCriteria { pairs.append(("filter-criteria", .string(filterCriteria))) }
        if let staleDate { pairs.append(("stale-date", .int(staleDate))) }
        if let contentState { pairs.append(("content-state", contentState)) }
        if let timestamp { pairs.append(("timestamp", .int(timestamp))) }
        if let event { pairs.append(("event", .string(event))) }
        if let dismissalDate { pairs.append(("dismissal-date", .int(dismissalDate))) }
        return .object(pairs)
    }
}

/// `interruption-level` values.
public enum InterruptionLevel: String, Sendable, CaseIterable {
    case passive, active
    case timeSensitive = "time-sensitive"
    case critical
}

/// The `alert` value: a string, or a dictionary of the fields below.
public struct Alert: Sendable, Equatable {
    /// When true the alert encodes as a plain string (`body` only).
    public var isPlainString: Bool
    public var title: String?
    public var subtitle: String?
    public var body: String?
    public var launchImage: String?
    public var titleLocKey: String?
    public var titleLocArgs: [String]?
    public var subtitleLocKey: String?
    public var subtitleLocArgs: [String]?
    public var locKey: String?
    public var locArgs: [String]?

    /// A plain-string alert: `"alert": "text"`.
    public static func text(_ body: String) -> Alert {
        Alert(isPlainString: true, body: body)
    }

    /// A dictionary alert.
    public init(
        isPlainString: Bool = false, title: String? = nil, subtitle: String? = nil, body: String? = nil,
        launchImage: String? = nil, titleLocKey: String? = nil, titleLocArgs: [String]? = nil,
        subtitleLocKey: String? = nil, subtitleLocArgs: [String]? = nil, locKey: String? = nil,
        locArgs: [String]? = nil
    ) {
        self.isPlainString = isPlainString
        self.title = title
        self.subtitle = subtitle
        self.body = body
        self.launchImage = launchImage
        self.titleLocKey = titleLocKey
        self.titleLocArgs = titleLocArgs
        self.subtitleLocKey = subtitleLocKey
        self.subtitleLocArgs = subtitleLocArgs
        self.locKey = locKey
        self.locArgs = locArgs
    }

    /// The alert as JSON.
    public var json: JSONValue {
        if isPlainString { return .string(body ?? "") }
        var pairs: [(String, JSONValue)] = []
        func add(_ key: String, _ value: String?) { if let value { pairs.append((key, .string(value))) } }
        func add(_ key: String, _ value: [String]?) { if let value { pairs.append((key, .array(value.map { .string($0) }))) } }
        add("title", title)
        add("subtitle", subtitle)
        add("body", body)
        add("launch-image", launchImage)
        add("title-loc-key", titleLocKey)
        add("title-loc-args", titleLocArgs)
        add("subtitle-loc-key", subtitleLocKey)
        add("subtitle-loc-args", subtitleLocArgs)
        add("loc-key", locKey)
        add("loc-args", locArgs)
        return .object(pairs)
    }
}

/// The `sound` value.
public enum Sound: Sendable, Equatable {
    /// A sound file name, or `default`.
    case named(String)
    /// The dictionary form, for critical alerts: `{critical, name, volume}`.
    case dictionary(name: String, critical: Bool, volume: Double)

    /// The sound as JSON.
    public var json: JSONValue {
        switch self {
        case .named(let name): return .string(name)
        case .dictionary(let name, let critical, let volume):
            return .object([("critical", .int(critical ? 1 : 0)), ("name", .string(name)), ("volume", .double(volume))])
        }
    }
}
