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

    /// Parses and validates the whole request; any problem is a 400 naming the field, before anything is stored.
    static func parse(_ bytes: [UInt8], payloadLimit: Int?) throws(APIError) -> NotificationBody {
        let json: JSONValue
        do { json = try JSONValue(parsing: bytes) } catch { throw APIError.badRequest("json", "body is not valid JSON: \(error)") }
        guard let pairs = json.objectPairs else { throw APIError.badRequest("json", "body must be a JSON object") }
        let known: Set<String> = [
            "id", "at", "tokens", "channel", "all", "environment", "payload", "options", "alert", "title", "subtitle",
            "badge", "sound", "silent", "data", "category", "threadId", "mutableContent",
        ]
        if let unknown = pairs.first(where: { !known.contains($0.0) }) {
            throw APIError.badRequest("field", "unknown field '\(unknown.0)'")
        }

        let target = try JobFields.target(json)
        let environment = try JobFields.environment(json)
        let id = try JobFields.id(json)
        let atMs = try JobFields.atMs(json)
        let prepared = try prepareContent(json, payloadLimit: payloadLimit)
        return NotificationBody(id: id, atMs: atMs, target: target, environment: environment, prepared: prepared)
    }

    /// The content fields of a send job, without a target: what `POST /v1/apps/{app}/payload-preview` takes.
    static let contentFields: Set<String> = [
        "payload", "options", "alert", "title", "subtitle", "badge", "sound", "silent", "data", "category", "threadId",
        "mutableContent",
    ]

    /// `POST /v1/apps/{app}/payload-preview`: only the content fields (no target, id, time or environment), built
    /// and validated exactly as a send job's, with the same 400s.
    static func parsePreview(_ bytes: [UInt8], payloadLimit: Int?) throws(APIError) -> PreparedNotification {
        let json: JSONValue
        do { json = try JSONValue(parsing: bytes) } catch { throw APIError.badRequest("json", "body is not valid JSON: \(error)") }
        guard let pairs = json.objectPairs else { throw APIError.badRequest("json", "body must be a JSON object") }
        if let unknown = pairs.first(where: { !contentFields.contains($0.0) }) {
            throw APIError.badRequest("field", "unknown field '\(unknown.0)' (a preview takes the content fields of a send job, no target)")
        }
        return try prepareContent(json, payloadLimit: payloadLimit)
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
                guard let e = v.intValue, (0...99_999_999_999).contains(e) else {
                    throw APIError.badRequest("options", "options.expiration must be epoch seconds (0 = deliver once)")
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
