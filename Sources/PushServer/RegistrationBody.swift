import PushCore
import PushStore

/// A device registration as posted by an app: JSON, or the seed client's form body.
struct RegistrationBody: Equatable {
    var token: DeviceToken
    var oldToken: DeviceToken?
    var channels: [String]?
    var environment: APNsEnvironment?

    /// Parses `application/json` `{"token","oldToken"?,"channels"?,"environment"?}`.
    static func parseJSON(_ bytes: [UInt8]) throws(APIError) -> RegistrationBody {
        let json: JSONValue
        do { json = try JSONValue(parsing: bytes) } catch {
            throw APIError.badRequest("json", "body is not valid JSON: \(error)")
        }
        guard let pairs = json.objectPairs else { throw APIError.badRequest("json", "body must be a JSON object") }
        var token: String?, oldToken: String?, channels: [String]?, environment: String?
        for (key, value) in pairs {
            switch key {
            case "token", "newToken":
                guard let s = value.stringValue else { throw APIError.badRequest("token", "'\(key)' must be a string") }
                guard token == nil else { throw APIError.badRequest("token", "give 'token' or 'newToken', not both") }
                token = s
            case "oldToken":
                if value == .null { continue }
                guard let s = value.stringValue else { throw APIError.badRequest("oldToken", "'oldToken' must be a string or null") }
                oldToken = s
            case "channels":
                guard case .array(let items) = value else {
                    throw APIError.badRequest("channels", "'channels' must be an array of strings")
                }
                channels = try items.map { (item) throws(APIError) -> String in
                    guard let s = item.stringValue else { throw APIError.badRequest("channels", "'channels' must be an array of strings") }
                    return s
                }
            case "environment":
                guard let s = value.stringValue else { throw APIError.badRequest("environment", "'environment' must be a string") }
                environment = s
            default:
                throw APIError.badRequest("field", "unknown field '\(key)'")
            }
        }
        return try make(token: token, oldToken: oldToken, channels: channels, environment: environment)
    }

    /// Parses `application/x-www-form-urlencoded`: `newToken=…&oldToken=…` exactly as the seed iOS client
    /// sends it — `%@` of an NSData gives `<740f4707 bebcf74f …>` with raw spaces and brackets (often not
    /// percent-encoded at all), and of nil gives `(null)`. `token`, `channel` (repeatable) and
    /// `environment` are accepted too.
    static func parseForm(_ bytes: [UInt8]) throws(APIError) -> RegistrationBody {
        var token: String?, oldToken: String?, channels: [String]?, environment: String?
        for part in bytes.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let pieces = part.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            let name = try decode(pieces[0])
            let value = pieces.count > 1 ? try decode(pieces[1]) : ""
            switch name {
            case "newToken", "token":
                guard token == nil else { throw APIError.badRequest("token", "give 'token' or 'newToken', not both") }
                token = value
            case "oldToken": oldToken = value
            case "channel", "channels":
                channels = (channels ?? []) + value.split(separator: ",").map(String.init)
            case "environment": environment = value
            default: throw APIError.badRequest("field", "unknown field '\(name)'")
            }
        }
        return try make(token: token, oldToken: oldToken, channels: channels, environment: environment)
    }

    private static func make(
        token: String?, oldToken: String?, channels: [String]?, environment: String?
    ) throws(APIError) -> RegistrationBody {
        guard let token else { throw APIError.badRequest("token", "'token' (or 'newToken') is required") }
        let parsed: DeviceToken
        do { parsed = try DeviceToken(parsing: token) } catch {
            throw APIError.badRequest("token", "token: \(error.description)")
        }
        let old: DeviceToken?
        do { old = try RegistrationRequest.parseOldToken(oldToken) } catch {
            throw APIError.badRequest("oldToken", "oldToken: \(error.description)")
        }
        var env: APNsEnvironment?
        if let environment, !environment.isEmpty {
            guard let e = APNsEnvironment(rawValue: environment) else {
                throw APIError.badRequest("environment", "environment must be development or production")
            }
            env = e
        }
        return RegistrationBody(token: parsed, oldToken: old, channels: channels, environment: env)
    }

    /// Percent-decodes a form component; `+` is a space.
    private static func decode(_ bytes: ArraySlice<UInt8>) throws(APIError) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = bytes.startIndex
        while i < bytes.endIndex {
            let b = bytes[i]
            if b == UInt8(ascii: "+") {
                out.append(0x20)
            } else if b == UInt8(ascii: "%"), i + 2 < bytes.endIndex,
                let hi = hexValue(bytes[i + 1]), let lo = hexValue(bytes[i + 2])
            {
                out.append(hi << 4 | lo)
                i += 2
            } else {
                out.append(b)
            }
            i += 1
        }
        guard let s = String(validating: out, as: UTF8.self) else {
            throw APIError.badRequest("form", "form body is not valid UTF-8")
        }
        return s
    }

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
