import PushCore

/// `POST /v1/apps/{app}/notifications`: who gets it, what it says, and its APNs options.
struct NotificationBody {
    typealias Target = JobFields.Target

    var id: String?
    /// Not before this time (ms since 1970): `"at"`, RFC 3339 or epoch seconds.
    var atMs: Int64?
    var target: Target
    var environment: APNsEnvironment?
    var prepared: PreparedNotification
    /// Per-locale text: each locale's payload, built and size-checked like `prepared` (the `default` text).
    var variants: [String: [UInt8]] = [:]
    /// `"localTime"`: each device at this wall-clock time in its own zone (exclusive with `at`).
    var localTime: LocalTimeSpec?

    /// Parses and validates the whole request; any problem is a 400 naming the field, before anything is stored.
    static func parse(_ bytes: [UInt8], payloadLimit: Int?) throws(APIError) -> NotificationBody {
        let json: JSONValue
        do { json = try JSONValue(parsing: bytes) } catch { throw APIError.badRequest("json", "body is not valid JSON: \(error)") }
        guard let pairs = json.objectPairs else { throw APIError.badRequest("json", "body must be a JSON object") }
        let known: Set<String> = [
            "id", "at", "localTime", "tokens", "channel", "all", "audience", "environment", "payload", "options", "alert", "title", "subtitle",
            "badge", "sound", "silent", "data", "category", "threadId", "mutableContent",
        ]
        if let unknown = pairs.first(where: { !known.contains($0.0) }) {
            throw APIError.badRequest("field", "unknown field '\(unknown.0)'")
        }

        let target = try JobFields.target(json)
        let environment = try JobFields.environment(json)
        let id = try JobFields.id(json)
        let atMs = try JobFields.atMs(json)
        let (prepared, variants) = try prepareLocalized(json, payloadLimit: payloadLimit)
        var body = NotificationBody(id: id, atMs: atMs, target: target, environment: environment, prepared: prepared, variants: variants)
        body.localTime = try localTime(json)
        if body.localTime != nil {
            if atMs != nil { throw APIError.badRequest("localTime", "give 'at' or 'localTime', not both") }
            if case .tokens = target { throw APIError.badRequest("localTime", "localTime sends to registered devices (their zones); not to listed tokens") }
        }
        return body
    }

    /// `"localTime": {"time": "HH:MM", "date"?: "YYYY-MM-DD", "skipPast"?: bool}`.
    static func localTime(_ json: JSONValue) throws(APIError) -> LocalTimeSpec? {
        guard let value = json["localTime"] else { return nil }
        guard let pairs = value.objectPairs else {
            throw APIError.badRequest("localTime", "'localTime' must be an object {\"time\": \"09:00\", \"date\"?, \"skipPast\"?}")
        }
        var time: String?, date: String?, skipPast = false
        for (key, item) in pairs {
            switch key {
            case "time", "date":
                guard let text = item.stringValue else { throw APIError.badRequest("localTime", "localTime.\(key) must be a string") }
                if key == "time" { time = text } else { date = text }
            case "skipPast":
                guard case .bool(let b) = item else { throw APIError.badRequest("localTime", "localTime.skipPast must be true or false") }
                skipPast = b
            default: throw APIError.badRequest("localTime", "unknown localTime field '\(key)' (use time, date, skipPast)")
            }
        }
        guard let time else { throw APIError.badRequest("localTime", "localTime.time (HH:MM) is required") }
        do { return try LocalTimeSpec.parse(time: time, date: date, skipPast: skipPast) } catch {
            throw APIError.badRequest("localTime", "localTime: \(error.message)")
        }
    }

    /// The default payload and, when `title`, `subtitle` or `alert` is given per locale (`{"default": "…", "de":
    /// "…"}`), one payload per locale named — every one built and size-checked before anything is stored, so a variant
    /// too large for APNs is a 400 naming its locale, not a failure at send time. The rule is ``LocalizedText``'s,
    /// which `pushctl --alert-for` shares.
    static func prepareLocalized(_ json: JSONValue, payloadLimit: Int?) throws(APIError) -> (PreparedNotification, [String: [UInt8]]) {
        var texts = LocalizedText()
        for field in LocalizedText.fields {
            guard let pairs = json[field]?.objectPairs else { continue }
            var entries: [(key: String, text: String)] = []
            for (key, value) in pairs {
                guard let text = value.stringValue else { throw APIError.badRequest(field, "\(field).\(key) must be a string") }
                entries.append((key, text))
            }
            do throws(FieldError) { try texts.set(field, entries) } catch { throw APIError.badRequest(error.field, error.message) }
        }
        guard !texts.isEmpty else { return (try prepareContent(json, payloadLimit: payloadLimit), [:]) }
        if json["payload"] != nil { throw APIError.badRequest("payload", "'payload' is sent as is; per-locale text needs the builder fields") }
        func substituted(for locale: String?) -> JSONValue {
            guard let pairs = json.objectPairs else { return json }
            return .object(pairs.map { key, value in (key, texts.text(key, for: locale).map { .string($0) } ?? value) })
        }
        return try texts.prepare(
            { (locale) throws(APIError) in try prepareContent(substituted(for: locale), payloadLimit: payloadLimit) },
            named: { locale, error in APIError(error.status, error.code, "locale \(locale): \(error.message)") })
    }

    /// The content fields of a send job, without a target: what `POST /v1/apps/{app}/payload-preview` takes.
    static let contentFields: Set<String> = [
        "payload", "options", "alert", "title", "subtitle", "badge", "sound", "silent", "data", "category", "threadId",
        "mutableContent",
    ]

    /// `POST /v1/apps/{app}/payload-preview`: only the content fields (no target, id, time or environment), built
    /// and validated exactly as a send job's, with the same 400s.
    static func parsePreview(_ bytes: [UInt8], payloadLimit: Int?) throws(APIError) -> (PreparedNotification, [String: [UInt8]]) {
        let json: JSONValue
        do { json = try JSONValue(parsing: bytes) } catch { throw APIError.badRequest("json", "body is not valid JSON: \(error)") }
        guard let pairs = json.objectPairs else { throw APIError.badRequest("json", "body must be a JSON object") }
        if let unknown = pairs.first(where: { !contentFields.contains($0.0) }) {
            throw APIError.badRequest("field", "unknown field '\(unknown.0)' (a preview takes the content fields of a send job, no target)")
        }
        return try prepareLocalized(json, payloadLimit: payloadLimit)
    }

    /// The payload and headers from the content fields (`payload` or the builder fields, and `options`).
    private static func prepareContent(_ json: JSONValue, payloadLimit: Int?) throws(APIError) -> PreparedNotification {
        let options = try parseOptions(json["options"], payloadLimit: payloadLimit)
        let prepared: PreparedNotification
        do {
            if let raw = json["payload"] {
                let builderKeys = ["alert", "title", "subtitle", "badge", "sound", "silent", "data", "category", "threadId", "mutableContent"]
                if let clash = builderKeys.first(where: { json[$0] != nil }) {
                    throw APIError.badRequest("payload", "'payload' is sent as is; it cannot be combined with '\(clash)'")
                }
                guard raw.objectPairs != nil else { throw APIError.badRequest("payload", "'payload' must be a JSON object") }
                prepared = try PreparedNotification(raw: raw.encoded, options: options)
            } else {
                prepared = try build(json).prepare(options)
            }
        } catch let error as PayloadError {
            throw APIError.badRequest("payload", error.message)
        } catch let error as APIError {
            throw error
        } catch {
            throw APIError.badRequest("payload", "\(error)")
        }
        return prepared
    }

    private static func parseOptions(_ value: JSONValue?, payloadLimit: Int?) throws(APIError) -> NotificationOptions {
        var options = NotificationOptions(limit: payloadLimit)
        guard let value else { return options }
        guard let pairs = value.objectPairs else { throw APIError.badRequest("options", "'options' must be an object") }
        for (key, v) in pairs {
            switch key {
            case "pushType":
                guard let t = v.stringValue.flatMap(PushType.init(rawValue:)) else {
                    throw APIError.badRequest("options", "options.pushType must be one of \(PushType.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                options.pushType = t
            case "priority":
                guard let p = v.intValue.flatMap({ PushPriority(rawValue: Int($0)) }) else {
                    throw APIError.badRequest("options", "options.priority must be 10, 5 or 1")
                }
                options.priority = p
            case "expiration":
                guard let e = v.intValue, Timestamp.epochSeconds.contains(e) else {
                    throw APIError.badRequest("options", "options.expiration must be epoch seconds from 0 to \(Timestamp.epochSeconds.upperBound) (0 = deliver once)")
                }
                options.expiration = e
            case "collapseId":
                guard let c = v.stringValue else { throw APIError.badRequest("options", "options.collapseId must be a string") }
                options.collapseId = c
            default:
                throw APIError.badRequest("options", "unknown option '\(key)'")
            }
        }
        return options
    }

    private static func build(_ json: JSONValue) throws(APIError) -> Payload {
        func string(_ key: String) throws(APIError) -> String? {
            guard let v = json[key] else { return nil }
            guard let s = v.stringValue else { throw APIError.badRequest(key, "'\(key)' must be a string") }
            return s
        }
        func flag(_ key: String) throws(APIError) -> Bool {
            guard let v = json[key] else { return false }
            guard case .bool(let b) = v else { throw APIError.badRequest(key, "'\(key)' must be true or false") }
            return b
        }
        var aps = APS()
        let alert = try string("alert"), title = try string("title"), subtitle = try string("subtitle")
        if title != nil || subtitle != nil {
            aps.alert = Alert(title: title, subtitle: subtitle, body: alert)
        } else if let alert {
            aps.alert = .text(alert)
        }
        if let badge = json["badge"] {
            guard let n = badge.intValue, (0...Int64(Int32.max)).contains(n) else {
                throw APIError.badRequest("badge", "'badge' must be an integer from 0 to 2147483647")
            }
            aps.badge = Int(n)
        }
        aps.sound = try string("sound").map { .named($0) }
        aps.category = try string("category")
        aps.threadId = try string("threadId")
        aps.mutableContent = try flag("mutableContent")
        if try flag("silent") {
            if aps.isUserVisible {
                throw APIError.badRequest("silent", "'silent' sends only content-available: 1; drop alert, title, badge and sound")
            }
            aps.contentAvailable = true
        }
        var custom: [(String, JSONValue)] = []
        if let data = json["data"] {
            guard let pairs = data.objectPairs else { throw APIError.badRequest("data", "'data' must be a JSON object") }
            custom = pairs
        }
        return Payload(aps: aps, custom: custom)
    }
}
