import PushCore

/// The fields every job-creating body shares (`POST …/notifications`, `…/live-activities/start`, update and end):
/// the optional `id`, `at` and `environment`, and the target (`tokens`, `channel` or `all: true`).
enum JobFields {
    /// Who gets it.
    enum Target: Equatable {
        case tokens([DeviceToken])
        case channel(String)
        case all
        case audience(Audience)
    }

    /// `"id"`: 1–64 characters of `A-Z a-z 0-9 . _ -`.
    static func id(_ json: JSONValue) throws(APIError) -> String? {
        guard let value = json["id"] else { return nil }
        guard let text = value.stringValue, PushConfiguration.isValidAppId(text) else {
            throw APIError.badRequest("id", "'id' must be 1-64 characters of A-Z a-z 0-9 . _ -")
        }
        return text
    }

    /// `"at"`: RFC 3339 or epoch seconds, as ms since 1970.
    static func atMs(_ json: JSONValue) throws(APIError) -> Int64? {
        guard let at = json["at"] else { return nil }
        if let seconds = at.intValue {
            guard Timestamp.epochSeconds.contains(seconds) else {
                throw APIError.badRequest("at", "'at' must be epoch seconds from 0 to \(Timestamp.epochSeconds.upperBound) or an RFC 3339 time")
            }
            return seconds * 1000
        } else if let text = at.stringValue {
            do { return try Timestamp.parseRFC3339(text) } catch { throw APIError.badRequest("at", error.message) }
        }
        throw APIError.badRequest("at", "'at' must be an RFC 3339 time (2026-11-24T08:00:00Z) or epoch seconds")
    }

    /// `"environment"`: development or production.
    static func environment(_ json: JSONValue) throws(APIError) -> APNsEnvironment? {
        guard let env = json["environment"] else { return nil }
        guard let text = env.stringValue, let e = APNsEnvironment(rawValue: text) else {
            throw APIError.badRequest("environment", "environment must be development or production")
        }
        return e
    }

    /// `"audience": {"user"?: U, "where"?: [CLAUSE, …]}` (see ``Audience/parse(where:user:)``); a bad one is a 400
    /// `invalid_audience` whose message names the clause.
    static func audience(_ json: JSONValue) throws(APIError) -> Audience? {
        guard let value = json["audience"] else { return nil }
        guard let pairs = value.objectPairs else {
            throw APIError.badRequest("audience", "'audience' must be an object {\"user\"?, \"where\"?: [clauses]}")
        }
        var user: String?
        var clauses: [String] = []
        for (key, item) in pairs {
            switch key {
            case "user":
                guard let s = item.stringValue else { throw APIError.badRequest("audience", "audience.user must be a string") }
                user = s
            case "where":
                guard let items = item.arrayValue, !items.isEmpty else {
                    throw APIError.badRequest("audience", "audience.where must be a non-empty array of clauses (strings)")
                }
                for (i, clause) in items.enumerated() {
                    guard let s = clause.stringValue else { throw APIError.badRequest("audience", "audience.where[\(i)] must be a string") }
                    clauses.append(s)
                }
            default:
                throw APIError.badRequest("audience", "unknown audience field '\(key)' (use user and where)")
            }
        }
        do { return try Audience.parse(where: clauses, user: user) } catch {
            throw APIError.badRequest("audience", "audience.\(error.message)")
        }
    }

    /// Exactly one of `tokens` (non-empty array of tokens), `channel` (a name) or `all: true`.
    static func target(_ json: JSONValue) throws(APIError) -> Target {
        var targets: [Target] = []
        if let tokens = json["tokens"] {
            guard case .array(let items) = tokens, !items.isEmpty else {
                throw APIError.badRequest("tokens", "'tokens' must be a non-empty array of strings")
            }
            var parsed: [DeviceToken] = []
            for (i, item) in items.enumerated() {
                guard let text = item.stringValue else { throw APIError.badRequest("tokens", "tokens[\(i)] must be a string") }
                do { parsed.append(try DeviceToken(parsing: text)) } catch {
                    throw APIError.badRequest("tokens", "tokens[\(i)]: \(error.description)")
                }
            }
            targets.append(.tokens(parsed))
        }
        if let channel = json["channel"] {
            guard let name = channel.stringValue, !name.isEmpty else { throw APIError.badRequest("channel", "'channel' must be a string") }
            targets.append(.channel(name))
        }
        if let all = json["all"] {
            guard all == .bool(true) else { throw APIError.badRequest("all", "'all' must be true") }
            targets.append(.all)
        }
        if let audience = try audience(json) { targets.append(.audience(audience)) }
        guard targets.count == 1 else {
            throw APIError.badRequest("target", "give exactly one of 'tokens', 'channel', 'all': true or 'audience'")
        }
        return targets[0]
    }
}
