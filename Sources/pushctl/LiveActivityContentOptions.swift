import ArgumentParser
import Foundation
import PushCore

/// The content of a Live Activity event from the command line: Apple's `aps` keys, given as flags or as a JSON
/// object (`--content FILE`), checked by ``LiveActivityContent``'s rules.
struct LiveActivityContentOptions: ParsableArguments {
    @Option(name: .customLong("content-state"), help: "content-state: a JSON object (the ContentState your app decodes).")
    var contentState: String?
    @Option(help: "A JSON object of the activity's aps keys (content-state, attributes, stale-date, …) from FILE or - (stdin); flags override its keys.")
    var content: String?
    @Option(name: .customLong("stale-date"), help: "stale-date: RFC 3339 time or epoch seconds.") var staleDate: String?
    @Option(name: .customLong("relevance-score"), help: "relevance-score: a number (higher sorts first).") var relevanceScore: Double?
    @Option(help: "timestamp (epoch seconds; default now).") var timestamp: Int64?
    @Option(help: "Alert title.") var title: String?
    @Option(help: "Alert body.") var alert: String?
    @Option(help: "Sound name, e.g. default.") var sound: String?
    @Option(help: "A JSON object whose keys are added beside aps.") var data: String?
    @Option(help: "apns-priority: 10 or 5 (default 10; Apple budgets priority-10 updates).") var priority: Int?
    @Option(help: "apns-expiration: RFC 3339 time or epoch seconds (0 = deliver once).") var expiration: String?
    @Option(name: .customLong("collapse-id"), help: "apns-collapse-id (at most 64 bytes).") var collapseId: String?

    /// Parses a JSON object argument, naming the option when it is not one.
    static func object(_ text: String, _ option: String) throws -> JSONValue {
        guard let value = try? JSONValue(parsing: Array(text.utf8)), value.objectPairs != nil else {
            throw CLIError.usage("\(option) must be a JSON object")
        }
        return value
    }

    /// Epoch seconds from an RFC 3339 time or epoch seconds.
    static func seconds(_ text: String, _ option: String) throws -> Int64 {
        do { return try Timestamp.parse(text) / 1000 } catch { throw CLIError.usage("\(option): \(error.message)") }
    }

    /// The event's content: `--content`'s keys, then the flags, then `extra` (event-specific keys).
    func build(event: LiveActivityEvent, extra: [(String, JSONValue)]) throws -> LiveActivityContent {
        var pairs: [(String, JSONValue)] = []
        if let content {
            let data: Data?
            if content == "-" { data = FileHandle.standardInput.readDataToEndOfFile() } else { data = FileManager.default.contents(atPath: content) }
            guard let data else { throw CLIError.usage("cannot read --content \(content)") }
            guard let value = try? JSONValue(parsing: Array(data)), let object = value.objectPairs else {
                throw CLIError.usage("--content must hold a JSON object of aps keys")
            }
            pairs = object
        }
        func set(_ key: String, _ value: JSONValue) {
            pairs.removeAll { $0.0 == key }
            pairs.append((key, value))
        }
        if let existing = pairs.first(where: { $0.0 == "event" })?.1, existing != .string(event.rawValue) {
            throw CLIError.usage("--content has event \(existing.encodedString); this command sends \(event.rawValue)")
        }
        set("event", .string(event.rawValue))
        if let contentState { set("content-state", try Self.object(contentState, "--content-state")) }
        if let staleDate { set("stale-date", .int(try Self.seconds(staleDate, "--stale-date"))) }
        if let relevanceScore { set("relevance-score", .double(relevanceScore)) }
        if let timestamp { set("timestamp", .int(timestamp)) }
        if title != nil || alert != nil {
            var alertPairs: [(String, JSONValue)] = []
            if let title { alertPairs.append(("title", .string(title))) }
            if let alert { alertPairs.append(("body", .string(alert))) }
            set("alert", .object(alertPairs))
        }
        if let sound { set("sound", .string(sound)) }
        for (key, value) in extra { set(key, value) }
        var built: LiveActivityContent
        do { built = try LiveActivityContent(json: .object(pairs)) } catch { throw CLIError.usage(error.message) }
        if let data { built.custom = try Self.object(data, "--data").objectPairs ?? [] }
        return built
    }

    /// The prepared notification (payload and headers) for `event`, now.
    func prepare(event: LiveActivityEvent, extra: [(String, JSONValue)] = [], appLimit: Int?) throws -> PreparedNotification {
        let built = try build(event: event, extra: extra)
        var priorityValue: PushPriority?
        if let priority {
            guard let p = PushPriority(rawValue: priority), p != .low else { throw CLIError.usage("--priority must be 10 or 5") }
            priorityValue = p
        }
        let expirationSeconds: Int64?
        if let expiration { expirationSeconds = expiration == "0" ? 0 : try Self.seconds(expiration, "--expiration") } else { expirationSeconds = nil }
        do {
            return try built.prepare(
                nowSeconds: Int64(Date().timeIntervalSince1970), priority: priorityValue, expiration: expirationSeconds,
                collapseId: collapseId, limit: appLimit)
        } catch { throw CLIError.usage(error.message) }
    }
}
