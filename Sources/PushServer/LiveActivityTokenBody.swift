import PushCore
import PushStore

/// `POST /v1/apps/{app}/live-activities/push-to-start-tokens` and `…/update-tokens`: a JSON object naming the
/// token and what it belongs to.
enum LiveActivityTokenBody {
    /// Parses and validates the body for `kind`; any problem is a 400 naming the field, before anything is stored.
    static func parse(_ bytes: [UInt8], app: String, kind: LiveActivityTokenKind, defaultEnvironment: APNsEnvironment)
        throws(APIError) -> LiveActivityRegistration
    {
        let json: JSONValue
        do { json = try JSONValue(parsing: bytes) } catch { throw APIError.badRequest("json", "body is not valid JSON: \(error)") }
        guard let pairs = json.objectPairs else { throw APIError.badRequest("json", "body must be a JSON object") }
        let known: Set<String> = kind == .pushToStart
            ? ["token", "installation", "attributesType", "channels", "environment"]
            : ["token", "activityId", "attributesType", "environment"]
        if let unknown = pairs.first(where: { !known.contains($0.0) }) {
            throw APIError.badRequest("field", "unknown field '\(unknown.0)' for a \(kind.rawValue) token")
        }
        func string(_ key: String) throws(APIError) -> String? {
            guard let value = json[key] else { return nil }
            guard let text = value.stringValue else { throw APIError.badRequest(key, "'\(key)' must be a string") }
            return text
        }
        guard let tokenText = try string("token") else { throw APIError.badRequest("token", "'token' is required") }
        let token: DeviceToken
        do { token = try DeviceToken(parsing: tokenText) } catch { throw APIError.badRequest("token", "token: \(error.description)") }
        var environment = defaultEnvironment
        if let text = try string("environment") {
            guard let e = APNsEnvironment(rawValue: text) else {
                throw APIError.badRequest("environment", "environment must be development or production")
            }
            environment = e
        }
        var channels: [String]?
        if let value = json["channels"] {
            guard case .array(let items) = value else { throw APIError.badRequest("channels", "'channels' must be an array of strings") }
            var names: [String] = []
            for item in items {
                guard let name = item.stringValue else { throw APIError.badRequest("channels", "'channels' must be an array of strings") }
                names.append(name)
            }
            channels = names
        }
        let request = LiveActivityRegistration(
            app: app, token: token, kind: kind, environment: environment, installation: try string("installation"),
            attributesType: try string("attributesType"), activityId: try string("activityId"), channels: channels)
        if let problem = request.problem {
            let field = ["installation", "attributesType", "activityId", "channels"].first { problem.contains($0) } ?? "field"
            throw APIError.badRequest(field, problem)
        }
        return request
    }
}
