extension LiveActivityContent {
    /// The keys `init(json:)` accepts: Apple's `aps` key names.
    public static let jsonKeys = [
        "event", "content-state", "timestamp", "stale-date", "dismissal-date", "relevance-score",
        "attributes-type", "attributes", "alert", "sound", "input-push-token", "input-push-channel",
    ]

    /// Parses Apple's key names from a JSON object, as the HTTP API and the CLI take them:
    /// `event` (required), `content-state`, `timestamp`, `stale-date`, `dismissal-date`, `relevance-score`,
    /// `attributes-type`, `attributes`, `alert`, `sound`, `input-push-token`, `input-push-channel`.
    /// `alert` is an object with `title` and `body` (each text or `{"loc-key", "loc-args"}`) and optionally
    /// `sound`, as in Apple's examples; `title-loc-key`, `title-loc-args`, `loc-key` and `loc-args` are also
    /// read. A `null` value means the key is absent. Unknown keys and wrong value types are errors naming the
    /// key; Apple's rules are checked by `prepare`.
    public init(json: JSONValue) throws(PayloadError) {
        guard let pairs = json.objectPairs else {
            throw PayloadError(.badAps, "a Live Activity must be a JSON object of Apple's aps keys (event, content-state, …)")
        }
        for (key, _) in pairs where !Self.jsonKeys.contains(key) {
            throw PayloadError(
                .invalidField(key),
                "unknown Live Activity key \"\(key)\"; expected one of: \(Self.jsonKeys.joined(separator: ", "))")
        }
        func value(_ key: String) -> JSONValue? {
            guard let v = json[key], v != .null else { return nil }
            return v
        }
        guard let eventValue = value("event") else {
            throw Self.field("event", "aps.event is required: start, update or end")
        }
        guard let name = eventValue.stringValue, let event = LiveActivityEvent(rawValue: name) else {
            throw Self.field("event", "aps.event must be start, update or end (got \(eventValue.encodedString))")
        }
        func seconds(_ key: String) throws(PayloadError) -> Int64? {
            guard let v = value(key) else { return nil }
            guard let i = v.intValue else {
                throw Self.field(key, "aps.\(key) must be an integer number of epoch seconds (got \(v.encodedString))")
            }
            return i
        }
        func string(_ key: String) throws(PayloadError) -> String? {
            guard let v = value(key) else { return nil }
            guard let s = v.stringValue else { throw Self.field(key, "aps.\(key) must be a string (got \(v.encodedString))") }
            return s
        }
        var relevance: Double?
        if let v = value("relevance-score") {
            guard let d = v.doubleValue else {
                throw Self.field("relevance-score", "aps.relevance-score must be a number (got \(v.encodedString))")
            }
            relevance = d
        }
        var inputPushToken = false
        if let v = value("input-push-token") {
            switch v {
            case .bool(let b): inputPushToken = b
            case _ where v.intValue == 1: inputPushToken = true
            case _ where v.intValue == 0: inputPushToken = false
            default: throw Self.field("input-push-token", "aps.input-push-token must be 1 (or 0 to leave it out)")
            }
        }
        var sound = try value("sound").map { (v) throws(PayloadError) in try Self.sound(v, key: "sound") }
        var alert: Alert?
        if let v = value("alert") {
            let parsed = try Self.alert(v)
            alert = parsed.alert
            if let inner = parsed.sound {
                if sound != nil {
                    throw Self.field("alert.sound", "give the sound once: either \"sound\" or \"alert.sound\", not both")
                }
                sound = inner
            }
        }
        self.init(
            event: event, contentState: value("content-state"), timestamp: try seconds("timestamp"),
            staleDate: try seconds("stale-date"), dismissalDate: try seconds("dismissal-date"),
            relevanceScore: relevance, attributesType: try string("attributes-type"), attributes: value("attributes"),
            alert: alert, sound: sound, inputPushToken: inputPushToken,
            inputPushChannel: try string("input-push-channel"))
    }

    private static let alertKeys = ["title", "body", "sound", "title-loc-key", "title-loc-args", "loc-key", "loc-args"]

    /// An alert object in ActivityKit's form, or a plain string (which `prepare` rejects with its own message).
    private static func alert(_ json: JSONValue) throws(PayloadError) -> (alert: Alert, sound: Sound?) {
        if let text = json.stringValue { return (.text(text), nil) }
        guard let pairs = json.objectPairs else {
            throw field("alert", "aps.alert must be an object with title and body (got \(json.encodedString))")
        }
        for (key, _) in pairs where !alertKeys.contains(key) {
            throw field("alert.\(key)", "unknown key \"\(key)\" in aps.alert; a Live Activity alert takes: \(alertKeys.joined(separator: ", "))")
        }
        var alert = Alert()
        func value(_ key: String) -> JSONValue? {
            guard let v = json[key], v != .null else { return nil }
            return v
        }
        func string(_ key: String) throws(PayloadError) -> String? {
            guard let v = value(key) else { return nil }
            guard let s = v.stringValue else { throw field("alert.\(key)", "aps.alert.\(key) must be a string") }
            return s
        }
        func strings(_ key: String, _ v: JSONValue?) throws(PayloadError) -> [String]? {
            guard let v else { return nil }
            guard let items = v.arrayValue else { throw field("alert.\(key)", "aps.alert.\(key) must be an array of strings") }
            var out: [String] = []
            for item in items {
                guard let s = item.stringValue else { throw field("alert.\(key)", "aps.alert.\(key) must be an array of strings") }
                out.append(s)
            }
            return out
        }
        /// `title`/`body`: text, or `{"loc-key": …, "loc-args": […]}`.
        func text(_ key: String) throws(PayloadError) -> (plain: String?, locKey: String?, locArgs: [String]?) {
            guard let v = value(key) else { return (nil, nil, nil) }
            if let s = v.stringValue { return (s, nil, nil) }
            guard let loc = v.objectPairs else {
                throw field("alert.\(key)", "aps.alert.\(key) must be text or {\"loc-key\", \"loc-args\"}")
            }
            for (k, _) in loc where k != "loc-key" && k != "loc-args" {
                throw field("alert.\(key)", "unknown key \"\(k)\" in aps.alert.\(key); expected loc-key and loc-args")
            }
            guard let locKey = v["loc-key"]?.stringValue else {
                throw field("alert.\(key)", "aps.alert.\(key).loc-key must be a string")
            }
            return (nil, locKey, try strings("\(key).loc-args", v["loc-args"]))
        }
        let title = try text("title")
        let body = try text("body")
        alert.title = title.plain
        alert.titleLocKey = title.locKey
        alert.titleLocArgs = title.locArgs
        alert.body = body.plain
        alert.locKey = body.locKey
        alert.locArgs = body.locArgs
        // The standard alert keys name the same fields; giving both forms is ambiguous.
        let flat: [(String, String)] = [("title-loc-key", "title"), ("title-loc-args", "title"), ("loc-key", "body"), ("loc-args", "body")]
        for (key, owner) in flat where value(key) != nil && value(owner)?.objectPairs != nil {
            throw field("alert.\(key)", "aps.alert.\(key) conflicts with the loc-key object in aps.alert.\(owner)")
        }
        if let k = try string("title-loc-key") { alert.titleLocKey = k }
        if let a = try strings("title-loc-args", value("title-loc-args")) { alert.titleLocArgs = a }
        if let k = try string("loc-key") { alert.locKey = k }
        if let a = try strings("loc-args", value("loc-args")) { alert.locArgs = a }
        return (alert, try value("sound").map { (v) throws(PayloadError) in try sound(v, key: "alert.sound") })
    }

    /// A sound name, or the critical-alert dictionary `{critical, name, volume}`.
    private static func sound(_ json: JSONValue, key: String) throws(PayloadError) -> Sound {
        if let name = json.stringValue { return .named(name) }
        guard let pairs = json.objectPairs, let name = json["name"]?.stringValue,
            pairs.allSatisfy({ ["critical", "name", "volume"].contains($0.0) })
        else {
            throw field(key, "aps.\(key) must be a sound name or {\"critical\", \"name\", \"volume\"}")
        }
        let critical: Bool
        switch json["critical"] {
        case nil, .null: critical = false
        case .bool(let b)?: critical = b
        case let v?:
            guard let i = v.intValue, i == 0 || i == 1 else { throw field("\(key).critical", "aps.\(key).critical must be 0 or 1") }
            critical = i == 1
        }
        var volume = 1.0
        if let v = json["volume"], v != .null {
            guard let d = v.doubleValue else { throw field("\(key).volume", "aps.\(key).volume must be a number") }
            volume = d
        }
        return .dictionary(name: name, critical: critical, volume: volume)
    }
}
