/// An ActivityKit push notification (push type `liveactivity`): the `aps` keys Apple defines for starting,
/// updating and ending a Live Activity, plus custom top-level keys. Build one in code or from Apple's key
/// names with `init(json:)`, then check Apple's rules and encode it with `prepare(nowSeconds:…)`.
public struct LiveActivityContent: Sendable, Equatable {
    /// `event`: start, update or end.
    public var event: LiveActivityEvent
    /// `content-state`: a JSON object matching the app's `ContentState`. Required for start and update;
    /// optional (but recommended by Apple: the final content) for end.
    public var contentState: JSONValue?
    /// `timestamp` in epoch seconds; nil means the `nowSeconds` given to `prepare`.
    public var timestamp: Int64?
    /// `stale-date` in epoch seconds.
    public var staleDate: Int64?
    /// `dismissal-date` in epoch seconds (end only; a date in the past dismisses at once).
    public var dismissalDate: Int64?
    /// `relevance-score`: any finite number; higher sorts first (Apple's examples use 50 and 100).
    public var relevanceScore: Double?
    /// `attributes-type`: the name of the app's `ActivityAttributes` type (start only, required there).
    public var attributesType: String?
    /// `attributes`: a JSON object matching the app's `ActivityAttributes` (start only, required there).
    public var attributes: JSONValue?
    /// `alert`: title and body (text or `title-loc-key`/`loc-key` with arguments). Required for start.
    public var alert: Alert?
    /// The alert's sound; encoded inside `aps.alert`, as ActivityKit expects. Needs an alert.
    public var sound: Sound?
    /// `input-push-token: 1`: ask the started activity for an update push token (start only, iOS 18+).
    public var inputPushToken: Bool
    /// `input-push-channel`: subscribe the started activity to a broadcast channel (start only, iOS 18+).
    public var inputPushChannel: String?
    /// Custom top-level keys in order (any JSON value). `aps` is reserved.
    public var custom: [(String, JSONValue)]

    /// Creates a Live Activity notification; everything but the event defaults to absent.
    public init(
        event: LiveActivityEvent, contentState: JSONValue? = nil, timestamp: Int64? = nil,
        staleDate: Int64? = nil, dismissalDate: Int64? = nil, relevanceScore: Double? = nil,
        attributesType: String? = nil, attributes: JSONValue? = nil, alert: Alert? = nil, sound: Sound? = nil,
        inputPushToken: Bool = false, inputPushChannel: String? = nil, custom: [(String, JSONValue)] = []
    ) {
        self.event = event
        self.contentState = contentState
        self.timestamp = timestamp
        self.staleDate = staleDate
        self.dismissalDate = dismissalDate
        self.relevanceScore = relevanceScore
        self.attributesType = attributesType
        self.attributes = attributes
        self.alert = alert
        self.sound = sound
        self.inputPushToken = inputPushToken
        self.inputPushChannel = inputPushChannel
        self.custom = custom
    }

    public static func == (lhs: LiveActivityContent, rhs: LiveActivityContent) -> Bool {
        lhs.event == rhs.event && lhs.contentState == rhs.contentState && lhs.timestamp == rhs.timestamp
            && lhs.staleDate == rhs.staleDate && lhs.dismissalDate == rhs.dismissalDate
            && lhs.relevanceScore == rhs.relevanceScore && lhs.attributesType == rhs.attributesType
            && lhs.attributes == rhs.attributes && lhs.alert == rhs.alert && lhs.sound == rhs.sound
            && lhs.inputPushToken == rhs.inputPushToken && lhs.inputPushChannel == rhs.inputPushChannel
            && JSONValue.object(lhs.custom) == JSONValue.object(rhs.custom)
    }

    /// The `aps` dictionary, keys in `APS.json`'s order with the start-only keys last. `timestamp` is the
    /// value to use when `self.timestamp` is nil. No validation: `prepare` checks the rules first.
    func apsJSON(timestamp now: Int64) -> JSONValue {
        var pairs: [(String, JSONValue)] = []
        if let alert { pairs.append(("alert", Self.alertJSON(alert, sound: sound))) }
        if let relevanceScore { pairs.append(("relevance-score", .double(relevanceScore))) }
        if let staleDate { pairs.append(("stale-date", .int(staleDate))) }
        if let contentState { pairs.append(("content-state", contentState)) }
        pairs.append(("timestamp", .int(timestamp ?? now)))
        pairs.append(("event", .string(event.rawValue)))
        if let dismissalDate { pairs.append(("dismissal-date", .int(dismissalDate))) }
        if let attributesType { pairs.append(("attributes-type", .string(attributesType))) }
        if let attributes { pairs.append(("attributes", attributes)) }
        if inputPushToken { pairs.append(("input-push-token", .int(1))) }
        if let inputPushChannel { pairs.append(("input-push-channel", .string(inputPushChannel))) }
        return .object(pairs)
    }

    /// ActivityKit's alert form: `title` and `body` are text or `{"loc-key", "loc-args"}`; `sound` sits inside.
    static func alertJSON(_ alert: Alert, sound: Sound?) -> JSONValue {
        func text(_ plain: String?, _ key: String?, _ args: [String]?) -> JSONValue? {
            if let key {
                var loc: [(String, JSONValue)] = [("loc-key", .string(key))]
                if let args { loc.append(("loc-args", .array(args.map { .string($0) }))) }
                return .object(loc)
            }
            return plain.map { .string($0) }
        }
        var pairs: [(String, JSONValue)] = []
        if let title = text(alert.title, alert.titleLocKey, alert.titleLocArgs) { pairs.append(("title", title)) }
        if let body = text(alert.body, alert.locKey, alert.locArgs) { pairs.append(("body", body)) }
        if let sound { pairs.append(("sound", sound.json)) }
        return .object(pairs)
    }
}
