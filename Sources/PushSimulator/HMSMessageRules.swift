import Foundation
import PushCore

/// Huawei Push Kit's rules for the body of `POST /v1/{clientId}/messages:send`, as the simulator applies them
/// (Huawei, "Sending Downlink Messages",
/// developer.huawei.com/consumer/en/doc/HMSCore-References/https-send-api-0000001050986197, and its result codes).
/// Every refusal is HTTP 400 with a Push Kit code; in order:
///
/// - `80100003` "Illegal payload, <what>" (Huawei's own wording, e.g. "Illegal payload, badge addNum value ranges
///   from 1 to 99"): the body is not a JSON object of `validate_only` (a boolean) and `message` (an object); the
///   message has not exactly one of `token`, `topic`, `condition`; `data` is not a string; `notification`, `android`,
///   `android.notification`, its `click_action` or `badge` hold a key the simulator does not know (one `Set` per object
///   below: stricter than Huawei, who may ignore them), a value of the wrong type or out of range; a notification
///   message has no title or body (from `android.notification` or `message.notification`).
/// - `80300010` "The number of tokens in the message body exceeds the default value": `message.token` is not an array
///   of 1…``maximumTokens`` strings.
/// - `80300008` "The message body size exceeds the default value": the body without its tokens is over
///   ``maximumMessageBytes`` (see ``messageBytes(bodyBytes:tokens:)``).
///
/// A JSON `null` counts as an absent key: Huawei's server reads it so, and clients send it (PyPI's pyhcm sends
/// `"topic": null` beside `token`). Pure: the tokens' state is the service's to judge. Independent of PushCore's
/// answer rules (the simulator referees the sender; it must not share its reading of Huawei).
enum HMSMessageRules {
    /// Huawei's limit on a message ("The message body size exceeds the default value", 80300008): 4096 bytes.
    static let maximumMessageBytes = 4096
    /// Huawei's limit on `message.token` (80300010): 1000 tokens a request.
    static let maximumTokens = 1000

    /// The Push Kit codes of the refusals here.
    enum Code {
        static let illegalPayload = "80100003"
        static let tokenCount = "80300010"
        static let bodySize = "80300008"
    }

    /// A refusal: HTTP 400 with `code` and `msg`.
    struct Refusal: Error, Sendable, Equatable {
        var code: String
        var message: String

        static func payload(_ what: String) -> Refusal {
            Refusal(code: Code.illegalPayload, message: "Illegal payload, " + what)
        }
    }

    /// Who a valid message is for.
    enum Target: Sendable, Equatable {
        case tokens([String])
        case topic(String)
        case condition(String)
    }

    /// A valid request: the message without `token`, whom it is for, and `validate_only`.
    struct Valid: Sendable {
        var message: JSONValue
        var target: Target
        var validateOnly: Bool
    }

    /// The body's own keys.
    private static let envelopeKeys: Set<String> = ["validate_only", "message"]
    /// `message`'s keys (`apns` and `webpush` are Huawei's, checked only as objects: the simulator plays Android).
    private static let messageKeys: Set<String> = [
        "data", "notification", "android", "apns", "webpush", "token", "topic", "condition",
    ]
    /// `message.notification`'s keys.
    private static let notificationKeys: Set<String> = ["title", "body", "image"]
    /// `message.android`'s keys (AndroidConfig).
    private static let androidKeys: Set<String> = [
        "collapse_key", "urgency", "category", "ttl", "bi_tag", "receipt_id", "fast_app_target", "data", "notification",
    ]
    /// `message.android.notification`'s keys (AndroidNotification): those the contract names and the rest of Huawei's
    /// documented fields, which PyPI's python-huawei-push-admin sends (`use_default_vibrate`, `use_default_light` and
    /// `foreground_show` always), so a message valid for Huawei is never refused as unknown.
    private static let androidNotificationKeys: Set<String> = [
        "title", "body", "icon", "color", "sound", "default_sound", "tag", "click_action", "body_loc_key",
        "body_loc_args", "title_loc_key", "title_loc_args", "multi_lang_key", "channel_id", "notify_summary", "image",
        "style", "big_title", "big_body", "auto_clear", "notify_id", "group", "badge", "ticker", "auto_cancel", "when",
        "local_only", "importance", "use_default_vibrate", "use_default_light", "vibrate_config", "visibility",
        "light_settings", "foreground_show", "inbox_content", "buttons", "profile_id",
    ]
    /// `android.notification`'s keys that are plain strings.
    private static let androidNotificationStrings: Set<String> = [
        "title", "body", "icon", "sound", "tag", "channel_id", "body_loc_key", "title_loc_key", "notify_summary",
        "big_title", "big_body", "group", "ticker", "when", "profile_id",
    ]
    /// `android.notification`'s booleans.
    private static let androidNotificationBooleans: Set<String> = [
        "default_sound", "auto_cancel", "local_only", "use_default_vibrate", "use_default_light", "foreground_show",
    ]
    /// `android.notification`'s arrays of strings.
    private static let androidNotificationStringArrays: Set<String> = [
        "body_loc_args", "title_loc_args", "vibrate_config", "inbox_content",
    ]
    /// `click_action`'s keys (ClickAction).
    private static let clickActionKeys: Set<String> = ["type", "intent", "action", "url", "rich_resource"]
    /// `badge`'s keys (BadgeNotification).
    private static let badgeKeys: Set<String> = ["add_num", "class", "set_num"]
    /// `android.notification.visibility`'s values.
    private static let visibilities: Set<String> = ["VISIBILITY_UNSPECIFIED", "PRIVATE", "PUBLIC", "SECRET"]

    static func validate(body: [UInt8]) -> Result<Valid, Refusal> {
        do throws(Refusal) {
            return .success(try check(body: body))
        } catch {
            return .failure(error)
        }
    }

    /// The bytes Huawei's 4096-byte limit applies to: the request body less the token strings' own bytes (their UTF-8,
    /// as decoded; the quotes and commas of the array stay counted), so a send to 1000 tokens and one to a single
    /// token carry the same message allowance.
    static func messageBytes(bodyBytes: Int, tokens: [String]) -> Int {
        bodyBytes - tokens.reduce(0) { $0 + $1.utf8.count }
    }

    private static func check(body: [UInt8]) throws(Refusal) -> Valid {
        guard let root = try? JSONValue(parsing: body), case .object = root else {
            throw .payload("the body is not a JSON object")
        }
        let envelope = try fields(root, "the body", allowed: envelopeKeys)
        var validateOnly = false
        if let flag = envelope["validate_only"] {
            guard case .bool(let value) = flag else { throw .payload("validate_only must be a boolean") }
            validateOnly = value
        }
        guard let message = envelope["message"] else { throw .payload("message is missing") }
        let keys = try fields(message, "message", allowed: messageKeys)
        let targets = ["token", "topic", "condition"].filter { keys[$0] != nil }
        guard targets.count == 1 else {
            throw .payload(
                "exactly one of message.token, message.topic and message.condition is required, not \(targets.count)")
        }
        if let data = keys["data"], data.stringValue == nil { throw .payload("message.data must be a string") }
        var notification: [String: JSONValue]?
        if let value = keys["notification"] { notification = try checkNotification(value) }
        var androidNotification: [String: JSONValue]?
        if let android = keys["android"] { androidNotification = try checkAndroid(android) }
        for key in ["apns", "webpush"] {
            if let value = keys[key], value.objectPairs == nil { throw .payload("message.\(key) must be an object") }
        }
        if notification != nil || androidNotification != nil {
            // Huawei refuses a notification message it cannot show: android.notification's title and body win over
            // message.notification's.
            for part in ["title", "body"] {
                let text = (androidNotification?[part] ?? notification?[part])?.stringValue ?? ""
                guard text.isEmpty else { continue }
                throw .payload(
                    "a notification message needs a \(part) (android.notification.\(part) or notification.\(part))")
            }
        }

        let target: Target
        switch targets[0] {
        case "token":
            guard let array = keys["token"]?.arrayValue, (1...maximumTokens).contains(array.count) else {
                throw Refusal(
                    code: Code.tokenCount, message: "The number of tokens in the message body exceeds the default value"
                )
            }
            var tokens: [String] = []
            tokens.reserveCapacity(array.count)
            for element in array {
                guard let token = element.stringValue else {
                    throw Refusal(
                        code: Code.tokenCount,
                        message: "The number of tokens in the message body exceeds the default value")
                }
                tokens.append(token)
            }
            target = .tokens(tokens)
        case "topic":
            guard let topic = keys["topic"]?.stringValue, (1...900).contains(topic.utf8.count),
                topic.utf8.allSatisfy(isTopicByte)
            else {
                throw .payload("message.topic must match [a-zA-Z0-9-_.~%]{1,900}")
            }
            target = .topic(topic)
        default:
            guard let condition = keys["condition"]?.stringValue, !condition.isEmpty else {
                throw .payload("message.condition must be a non-empty string")
            }
            target = .condition(condition)
        }
        var tokens: [String] = []
        if case .tokens(let list) = target { tokens = list }
        let size = messageBytes(bodyBytes: body.count, tokens: tokens)
        guard size <= maximumMessageBytes else {
            throw Refusal(
                code: Code.bodySize,
                message: "The message body size exceeds the default value (\(size) bytes without the tokens; "
                    + "at most \(maximumMessageBytes))")
        }
        let withoutToken = JSONValue.object((message.objectPairs ?? []).filter { $0.0 != "token" })
        return Valid(message: withoutToken, target: target, validateOnly: validateOnly)
    }

    /// `message.notification`: title, body (strings) and image (an https URL).
    private static func checkNotification(_ value: JSONValue) throws(Refusal) -> [String: JSONValue] {
        let keys = try fields(value, "message.notification", allowed: notificationKeys)
        for key in ["title", "body"] { try string(keys, key, at: "notification") }
        if let image = keys["image"] { try httpsURL(image, "notification.image") }
        return keys
    }

    /// `message.android`, and its `notification`'s fields when it has one.
    private static func checkAndroid(_ value: JSONValue) throws(Refusal) -> [String: JSONValue]? {
        let keys = try fields(value, "message.android", allowed: androidKeys)
        if let key = keys["collapse_key"] { try integer(key, "android.collapse_key", in: -1...100) }
        if let urgency = keys["urgency"], !["HIGH", "NORMAL"].contains(urgency.stringValue ?? "") {
            throw .payload("android.urgency must be HIGH or NORMAL")
        }
        for key in ["category", "bi_tag", "receipt_id", "data"] { try string(keys, key, at: "android") }
        if let ttl = keys["ttl"], !(ttl.stringValue.map(isTTL) ?? false) {
            throw .payload("android.ttl must be seconds with up to 9 decimals and an s, such as \"86400s\"")
        }
        if let target = keys["fast_app_target"] { try integer(target, "android.fast_app_target", in: 1...2) }
        guard let notification = keys["notification"] else { return nil }
        return try checkAndroidNotification(notification)
    }

    private static func checkAndroidNotification(_ value: JSONValue) throws(Refusal) -> [String: JSONValue] {
        let at = "android.notification"
        let keys = try fields(value, "message." + at, allowed: androidNotificationKeys)
        for key in androidNotificationStrings { try string(keys, key, at: at) }
        for key in androidNotificationBooleans {
            if let flag = keys[key], case .bool = flag {
            } else if keys[key] != nil {
                throw .payload("\(at).\(key) must be a boolean")
            }
        }
        for key in androidNotificationStringArrays {
            guard let array = keys[key] else { continue }
            guard let elements = array.arrayValue, elements.allSatisfy({ $0.stringValue != nil }) else {
                throw .payload("\(at).\(key) must be an array of strings")
            }
        }
        for key in ["multi_lang_key", "light_settings"] {
            if let object = keys[key], object.objectPairs == nil { throw .payload("\(at).\(key) must be an object") }
        }
        if let buttons = keys["buttons"], !(buttons.arrayValue?.allSatisfy { $0.objectPairs != nil } ?? false) {
            throw .payload("\(at).buttons must be an array of objects")
        }
        if let color = keys["color"], !(color.stringValue.map(isColor) ?? false) {
            throw .payload("\(at).color must be #RRGGBB")
        }
        if let image = keys["image"] { try httpsURL(image, "\(at).image") }
        if let style = keys["style"] { try integer(style, "\(at).style", in: 0...3) }
        if let id = keys["notify_id"] { try integer(id, "\(at).notify_id", in: Int64(Int32.min)...Int64(Int32.max)) }
        if let clear = keys["auto_clear"] { try integer(clear, "\(at).auto_clear", in: 0...Int64(Int32.max)) }
        if let importance = keys["importance"], !["LOW", "NORMAL", "HIGH"].contains(importance.stringValue ?? "") {
            throw .payload("\(at).importance must be LOW, NORMAL or HIGH")
        }
        if let visibility = keys["visibility"], !visibilities.contains(visibility.stringValue ?? "") {
            throw .payload("\(at).visibility must be VISIBILITY_UNSPECIFIED, PRIVATE, PUBLIC or SECRET")
        }
        guard let action = keys["click_action"] else { throw .payload("\(at).click_action is required") }
        try checkClickAction(action)
        if let badge = keys["badge"] { try checkBadge(badge) }
        return keys
    }

    /// ClickAction: `type` 1 (an intent or an action), 2 (an https `url`), 3 (open the app) or 4 (a rich resource).
    private static func checkClickAction(_ value: JSONValue) throws(Refusal) {
        let at = "android.notification.click_action"
        let keys = try fields(value, "message." + at, allowed: clickActionKeys)
        for key in ["intent", "action", "url", "rich_resource"] { try string(keys, key, at: at) }
        guard let type = keys["type"] else { throw .payload("\(at).type is required") }
        try integer(type, "\(at).type", in: 1...4)
        switch type.intValue {
        case 1:
            guard keys["intent"] != nil || keys["action"] != nil else {
                throw .payload("\(at).intent or \(at).action is required when type is 1")
            }
        case 2:
            guard let url = keys["url"] else { throw .payload("\(at).url is required when type is 2") }
            try httpsURL(url, "\(at).url")
        case 4:
            guard let resource = keys["rich_resource"] else {
                throw .payload("\(at).rich_resource is required when type is 4")
            }
            try httpsURL(resource, "\(at).rich_resource")
        default: break
        }
    }

    /// BadgeNotification: `class` (the app's launcher activity) required, `add_num` 1…99, `set_num` 0…99.
    private static func checkBadge(_ value: JSONValue) throws(Refusal) {
        let at = "android.notification.badge"
        let keys = try fields(value, "message." + at, allowed: badgeKeys)
        guard let name = keys["class"]?.stringValue, !name.isEmpty else { throw .payload("\(at).class is required") }
        if let add = keys["add_num"] {
            try integer(add, "badge addNum value ranges from 1 to 99: \(at).add_num", in: 1...99)
        }
        if let set = keys["set_num"] { try integer(set, "\(at).set_num", in: 0...99) }
    }

    // MARK: - Checks

    /// An object's keys (a `null` value counts as absent); refused when `value` is not an object, names a key twice or
    /// a key outside `allowed`.
    private static func fields(_ value: JSONValue, _ name: String, allowed: Set<String>) throws(Refusal) -> [String:
        JSONValue]
    {
        guard let pairs = value.objectPairs else { throw .payload("\(name) must be an object") }
        var keys: [String: JSONValue] = [:]
        for (key, field) in pairs {
            guard allowed.contains(key) else { throw .payload("\(name) has an unknown key \"\(key)\"") }
            guard keys[key] == nil else { throw .payload("\(name) has the key \"\(key)\" twice") }
            if field != .null { keys[key] = field }
        }
        return keys
    }

    private static func string(_ keys: [String: JSONValue], _ key: String, at: String) throws(Refusal) {
        if let value = keys[key], value.stringValue == nil { throw .payload("\(at).\(key) must be a string") }
    }

    /// A JSON integer (not `1.0`, not `"1"`) in `range`.
    private static func integer(_ value: JSONValue, _ name: String, in range: ClosedRange<Int64>) throws(Refusal) {
        guard case .int(let number) = value, range.contains(number) else {
            throw .payload("\(name) must be an integer from \(range.lowerBound) to \(range.upperBound)")
        }
    }

    private static func httpsURL(_ value: JSONValue, _ name: String) throws(Refusal) {
        guard let text = value.stringValue, let url = URLComponents(string: text), url.scheme?.lowercased() == "https",
            let host = url.host, !host.isEmpty
        else { throw .payload("\(name) must be an https URL") }
    }

    /// `^[0-9]+(\.[0-9]{1,9})?s$`.
    static func isTTL(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.last == UInt8(ascii: "s") else { return false }
        let number = bytes.dropLast().split(
            separator: UInt8(ascii: "."), maxSplits: 1, omittingEmptySubsequences: false)
        func digits(_ part: ArraySlice<UInt8>) -> Bool { !part.isEmpty && part.allSatisfy { $0 >= 0x30 && $0 <= 0x39 } }
        guard let whole = number.first, digits(whole) else { return false }
        return number.count == 1 || (digits(number[1]) && number[1].count <= 9)
    }

    /// `#RRGGBB`.
    private static func isColor(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        return bytes.count == 7 && bytes[0] == UInt8(ascii: "#")
            && bytes.dropFirst().allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x46) || (byte >= 0x61 && byte <= 0x66)
            }
    }

    private static func isTopicByte(_ c: UInt8) -> Bool {
        (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39)
            || c == UInt8(ascii: "-") || c == UInt8(ascii: "_") || c == UInt8(ascii: ".") || c == UInt8(ascii: "~")
            || c == UInt8(ascii: "%")
    }
}
