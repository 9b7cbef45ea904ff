extension LiveActivityContent {
    /// Validates Apple's rules for ActivityKit push notifications and builds the prepared notification:
    /// push type `liveactivity` (topic `<bundle>.push-type.liveactivity`), priority 10 (default) or 5,
    /// the given expiration, collapse id and apns-id, and the byte limit (4096, or `limit` if lower).
    /// The payload is never truncated: a payload over the limit is an error naming its size and the limit.
    /// - Parameter nowSeconds: the current time in epoch seconds, used as `timestamp` when none is set.
    public func prepare(
        nowSeconds: Int64, priority: PushPriority? = nil, expiration: Int64? = nil,
        collapseId: String? = nil, notificationId: String? = nil, limit: Int? = nil
    ) throws(PayloadError) -> PreparedNotification {
        try validate(nowSeconds: nowSeconds)
        if priority == .low {
            throw PayloadError(
                .priorityNotAllowed, "priority 1 is not allowed for Live Activity pushes: Apple accepts 5 or 10")
        }
        let options = NotificationOptions(
            pushType: .liveactivity, priority: priority, expiration: expiration, collapseId: collapseId,
            notificationId: notificationId, limit: limit, allowTruncation: false)
        let header = try PushRules.headers(options, pushType: .liveactivity)
        let bytes = JSONValue.object([("aps", apsJSON(timestamp: nowSeconds))] + custom).encoded
        guard bytes.count <= header.limit else {
            throw PushRules.tooLarge(bytes.count, header.limit, hint: " (Live Activity payloads are never truncated)")
        }
        return PreparedNotification(
            payload: bytes, pushType: .liveactivity, priority: header.priority, expiration: expiration,
            collapseId: collapseId, notificationId: notificationId, limit: header.limit, truncated: false)
    }

    /// Apple's rules, each with its own message. The first rule broken is reported.
    func validate(nowSeconds: Int64) throws(PayloadError) {
        for (key, _) in custom where key == "aps" {
            throw PayloadError(.badAps, "custom key 'aps' is reserved for Apple's dictionary")
        }
        // Keys that belong to one event.
        if event != .start {
            let startOnly: [(String, Bool)] = [
                ("attributes-type", attributesType != nil), ("attributes", attributes != nil),
                ("input-push-token", inputPushToken), ("input-push-channel", inputPushChannel != nil),
            ]
            for (key, present) in startOnly where present {
                throw Self.field(key, "aps.\(key) is only for start events (this is an \(event.rawValue) event)")
            }
        }
        if event != .end, dismissalDate != nil {
            throw Self.field("dismissal-date", "aps.dismissal-date is only for end events (this is \(Self.article(event)) event)")
        }
        // content-state.
        if let contentState {
            guard contentState.objectPairs != nil else {
                throw Self.field("content-state", "aps.content-state must be a JSON object (the fields of your ContentState)")
            }
        } else if event != .end {
            throw Self.field("content-state", "aps.content-state is required for \(event.rawValue) events")
        }
        // Start: attributes-type, attributes, alert.
        if event == .start {
            guard let attributesType else {
                throw Self.field("attributes-type", "aps.attributes-type is required for start events (the name of your ActivityAttributes type)")
            }
            guard Self.isTypeName(attributesType) else {
                throw Self.field(
                    "attributes-type",
                    "aps.attributes-type must be a Swift type name: ASCII letters, digits, _ and . (no part starting with a digit), at most \(Self.maxTypeNameBytes) bytes")
            }
            guard let attributes else {
                throw Self.field("attributes", "aps.attributes is required for start events (the fields of your ActivityAttributes)")
            }
            guard attributes.objectPairs != nil else {
                throw Self.field("attributes", "aps.attributes must be a JSON object (the fields of your ActivityAttributes)")
            }
            guard alert != nil else {
                throw Self.field("alert", "aps.alert is required for start events: Apple requires an alert when a push starts a Live Activity")
            }
        }
        // How a started activity gets its updates.
        if inputPushToken, inputPushChannel != nil {
            throw Self.field(
                "input-push-channel",
                "aps.input-push-token and aps.input-push-channel cannot be combined: updates come either to a token or on a channel")
        }
        if let inputPushChannel, !Self.isBase64(inputPushChannel) {
            throw Self.field(
                "input-push-channel",
                "aps.input-push-channel must be a channel id as APNs returned it: non-empty base64 text (A-Z a-z 0-9 + / and = padding)")
        }
        // Numbers.
        if let relevanceScore, !relevanceScore.isFinite {
            throw Self.field("relevance-score", "aps.relevance-score must be a finite number")
        }
        for (key, value) in [("timestamp", timestamp ?? nowSeconds), ("stale-date", staleDate), ("dismissal-date", dismissalDate)] {
            if let value, !Timestamp.epochSeconds.contains(value) {
                throw Self.field(key, "aps.\(key) must be epoch seconds from 0 to \(Timestamp.epochSeconds.upperBound) (got \(value))")
            }
        }
        try validateAlert()
    }

    /// ActivityKit alerts have a title, a body and an optional sound (`AlertConfiguration`), nothing else.
    private func validateAlert() throws(PayloadError) {
        guard let alert else {
            if sound != nil {
                throw Self.field("alert.sound", "aps.alert.sound needs an alert: a Live Activity plays its sound with the alert's title and body")
            }
            return
        }
        if alert.isPlainString {
            throw Self.field("alert", "aps.alert must be a dictionary with title and body for a Live Activity (a plain-string alert has no title)")
        }
        let unsupported: [(String, Bool)] = [
            ("subtitle", alert.subtitle != nil), ("launch-image", alert.launchImage != nil),
            ("subtitle-loc-key", alert.subtitleLocKey != nil), ("subtitle-loc-args", alert.subtitleLocArgs != nil),
        ]
        for (key, present) in unsupported where present {
            throw Self.field("alert.\(key)", "aps.alert.\(key) is not part of a Live Activity alert: use title, body and sound")
        }
        try Self.checkText("title", plain: alert.title, locKey: alert.titleLocKey, locArgs: alert.titleLocArgs, keyName: "title-loc-key")
        try Self.checkText("body", plain: alert.body, locKey: alert.locKey, locArgs: alert.locArgs, keyName: "loc-key")
        if case .dictionary(_, _, let volume) = sound, !(0...1).contains(volume) {
            throw Self.field("alert.sound.volume", "aps.alert.sound volume must be between 0 and 1")
        }
    }

    private static func checkText(
        _ name: String, plain: String?, locKey: String?, locArgs: [String]?, keyName: String
    ) throws(PayloadError) {
        if plain != nil, locKey != nil {
            throw field("alert.\(name)", "aps.alert.\(name): give the text or a \(keyName), not both")
        }
        if locArgs != nil, locKey == nil {
            throw field("alert.\(name)", "aps.alert.\(name): loc-args need a \(keyName)")
        }
        if plain == nil, locKey == nil {
            throw field("alert.\(name)", "aps.alert.\(name) is required: a Live Activity alert has a title and a body")
        }
    }

    /// The longest `attributes-type` accepted. Apple gives no limit; Swift type names this long are a mistake.
    static let maxTypeNameBytes = 128

    /// A Swift type name, optionally qualified: dot-separated ASCII identifiers.
    static func isTypeName(_ name: String) -> Bool {
        guard !name.isEmpty, name.utf8.count <= maxTypeNameBytes else { return false }
        for part in name.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false) {
            guard let first = part.first, !isDigit(first) else { return false }
            for byte in part where !(isLetter(byte) || isDigit(byte) || byte == UInt8(ascii: "_")) { return false }
        }
        return true
    }

    /// Standard base64 with padding, as APNs returns channel ids (`apns-channel-id`).
    static func isBase64(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty, bytes.count % 4 == 0 else { return false }
        let padding = bytes.reversed().prefix(while: { $0 == UInt8(ascii: "=") }).count
        guard padding <= 2, padding < bytes.count else { return false }
        return bytes.dropLast(padding).allSatisfy {
            isLetter($0) || isDigit($0) || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "/")
        }
    }

    private static func isDigit(_ b: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b) }
    private static func isLetter(_ b: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(b) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(b)
    }

    private static func article(_ event: LiveActivityEvent) -> String {
        event == .update ? "an update" : "a \(event.rawValue)"
    }

    static func field(_ key: String, _ message: String) -> PayloadError {
        PayloadError(.invalidField("aps.\(key)"), message)
    }
}
