import PushCore
import PushStore

/// A device registration as posted by an app: JSON, or the seed client's form body. Both end in PushStore's
/// ``RegistrationFields`` (the one parser the CLI's JSON-lines import uses too).
struct RegistrationBody: Equatable {
    var fields: RegistrationFields

    var token: DeviceToken { fields.token }
    var channels: [String]? { fields.channels }
    var environment: APNsEnvironment? { fields.environment }

    /// Parses `application/json` (see ``RegistrationFields/parse(json:webPush:)``); `webPush` is the app's host policy,
    /// nil when it has no Web Push.
    static func parseJSON(
        _ bytes: [UInt8], webPush: WebPushHostPolicy? = nil, unifiedPush: UnifiedPushHostPolicy? = nil
    ) throws(APIError) -> RegistrationBody {
        let json: JSONValue
        do { json = try JSONValue(parsing: bytes) } catch {
            throw APIError.badRequest("json", "body is not valid JSON: \(error)")
        }
        do { return RegistrationBody(fields: try RegistrationFields.parse(json: json, webPush: webPush, unifiedPush: unifiedPush)) } catch {
            throw APIError.badRequest(error.field, error.message)
        }
    }

    /// Parses `application/x-www-form-urlencoded`: `newToken=…&oldToken=…` exactly as the seed iOS client
    /// sends it — `%@` of an NSData gives `<740f4707 bebcf74f …>` with raw spaces and brackets (often not
    /// percent-encoded at all), and of nil gives `(null)`. `token`, `channel` (repeatable) and
    /// `environment` are accepted too, and the installation fields but tags (`installation`, `user`, `userAuth`,
    /// `timeZone`, `locale`, `appVersion`, `osVersion`): a field given empty (`user=`) clears it, as `null` does in
    /// JSON.
    static func parseForm(_ bytes: [UInt8]) throws(APIError) -> RegistrationBody {
        var token: String?, oldToken: String?, channels: [String]?, environment: String?, userAuth: String?
        var installation = InstallationUpdate()
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
            case "userAuth": userAuth = value
            default:
                // Tags are a JSON object: JSON bodies only.
                guard InstallationUpdate.fieldNames.contains(name), name != "tags" else {
                    throw APIError.badRequest("field", "unknown field '\(name)'")
                }
                do { try installation.set(name, text: value.isEmpty ? nil : value, zones: SystemTimeZones.names) } catch {
                    throw APIError.badRequest(error.field, error.message)
                }
            }
        }
        do {
            return RegistrationBody(fields: try RegistrationFields.make(
                token: token, oldToken: oldToken, channels: channels, environment: environment, installation: installation,
                userAuth: userAuth))
        } catch {
            throw APIError.badRequest(error.field, error.message)
        }
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
