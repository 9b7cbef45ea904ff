import Foundation
import PushCore

/// The body of `POST …/live-activities/start`, `…/activities/{activity}/update|end` and
/// `…/broadcast-channels/{id}/notifications`: the activity's `content` (Apple's `aps` keys), custom `data`, the APNs
/// options, and for jobs `id` and `at` (and, for start, the target).
struct LiveActivityBody {
    var id: String?
    var atMs: Int64?
    var target: JobFields.Target?
    var environment: APNsEnvironment?
    var content: LiveActivityContent
    var prepared: PreparedNotification

    /// What a body may hold.
    enum Kind {
        /// A start job: a target of push-to-start tokens.
        case start
        /// An update or end job for one activity.
        case activity(LiveActivityEvent)
        /// An update or end to a broadcast channel: sent now, no id or time.
        case channel
    }

    /// Parses and validates the whole body; any problem is a 400 naming the field, before anything is stored or sent.
    static func parse(_ bytes: [UInt8], kind: Kind, payloadLimit: Int?, nowSeconds: Int64) throws(APIError) -> LiveActivityBody {
        let json: JSONValue
        do { json = try JSONValue(parsing: bytes) } catch { throw APIError.badRequest("json", "body is not valid JSON: \(error)") }
        guard let pairs = json.objectPairs else { throw APIError.badRequest("json", "body must be a JSON object") }
        var known: Set<String> = ["content", "data", "priority", "expiration", "collapseId"]
        switch kind {
        case .start: known.formUnion(["id", "at", "tokens", "channel", "all", "audience", "environment"])
        case .activity: known.formUnion(["id", "at"])
        case .channel: known.insert("environment")
        }
        if let unknown = pairs.first(where: { !known.contains($0.0) }) {
            throw APIError.badRequest("field", "unknown field '\(unknown.0)'")
        }
        guard let contentValue = json["content"], var contentPairs = contentValue.objectPairs else {
            throw APIError.badRequest("content", "'content' must be an object of the activity's aps keys (content-state, …)")
        }
        // The event comes from the route for jobs; a channel broadcast names update or end in the content.
        let routeEvent: LiveActivityEvent?
        switch kind {
        case .start: routeEvent = .start
        case .activity(let event): routeEvent = event
        case .channel: routeEvent = nil
        }
        // The HTTP contract is exactly docs/openapi.yaml's: Apple's keys for this event, no nulls, and an alert of
        // title, body and sound (the CLI's --content also takes the loc-key spellings).
        let eventName = routeEvent?.rawValue ?? contentValue["event"]?.stringValue
        var allowed: Set<String> = ["event", "content-state", "timestamp", "stale-date", "relevance-score", "alert"]
        switch eventName {
        case "start": allowed.formUnion(["attributes-type", "attributes", "input-push-token", "input-push-channel"])
        case "end": allowed.insert("dismissal-date")
        default: break
        }
        for (key, value) in contentPairs {
            guard allowed.contains(key) else {
                throw APIError.badRequest("content", "content.\(key) is not a key of \(eventName.map { "a Live Activity \($0) event" } ?? "this event")")
            }
            if value == .null { throw APIError.badRequest("content", "content.\(key) must not be null; leave it out") }
        }
        if let alert = contentValue["alert"], let alertPairs = alert.objectPairs {
            for (key, value) in alertPairs {
                guard ["title", "body", "sound"].contains(key) else {
                    throw APIError.badRequest("content", "content.alert takes title, body and sound, not \(key)")
                }
                if value == .null { throw APIError.badRequest("content", "content.alert.\(key) must not be null; leave it out") }
            }
            // The critical-alert dictionary too: the core's parser reads a null critical or volume as left out (the
            // CLI's --content), the description allows no null there.
            if let soundPairs = alert["sound"]?.objectPairs, let null = soundPairs.first(where: { $0.1 == .null }) {
                throw APIError.badRequest("content", "content.alert.sound.\(null.0) must not be null; leave it out")
            }
        }
        if let routeEvent {
            if let given = contentValue["event"], given != .string(routeEvent.rawValue) {
                throw APIError.badRequest("content", "content.event is \(given.encodedString) but this route sends \(routeEvent.rawValue)")
            }
            contentPairs.removeAll { $0.0 == "event" }
            contentPairs.insert(("event", .string(routeEvent.rawValue)), at: 0)
        }
        var content: LiveActivityContent
        do { content = try LiveActivityContent(json: .object(contentPairs)) } catch {
            throw APIError.badRequest("content", error.message)
        }
        if case .channel = kind, content.event == .start {
            throw APIError.badRequest("content", "a broadcast channel carries update and end events; start activities through push-to-start tokens")
        }
        if let data = json["data"] {
            guard let custom = data.objectPairs else { throw APIError.badRequest("data", "'data' must be a JSON object") }
            content.custom = custom
        }
        var priority: PushPriority?
        if let value = json["priority"] {
            guard let n = value.intValue, n == 10 || n == 5 else { throw APIError.badRequest("priority", "'priority' must be 10 or 5") }
            priority = PushPriority(rawValue: Int(n))
        }
        var expiration: Int64?
        if let value = json["expiration"] {
            guard let e = value.intValue, Timestamp.epochSeconds.contains(e) else {
                throw APIError.badRequest("expiration", "'expiration' must be epoch seconds from 0 to \(Timestamp.epochSeconds.upperBound) (0 = deliver once)")
            }
            expiration = e
        }
        var collapseId: String?
        if let value = json["collapseId"] {
            guard let c = value.stringValue else { throw APIError.badRequest("collapseId", "'collapseId' must be a string") }
            collapseId = c
        }
        let prepared: PreparedNotification
        do {
            prepared = try content.prepare(
                nowSeconds: nowSeconds, priority: priority, expiration: expiration, collapseId: collapseId, limit: payloadLimit)
        } catch { throw APIError.badRequest("content", error.message) }
        var body = LiveActivityBody(content: content, prepared: prepared)
        body.environment = try JobFields.environment(json)
        switch kind {
        case .start:
            body.id = try JobFields.id(json)
            body.atMs = try JobFields.atMs(json)
            body.target = try JobFields.target(json)
        case .activity:
            body.id = try JobFields.id(json)
            body.atMs = try JobFields.atMs(json)
        case .channel: break
        }
        return body
    }
}
