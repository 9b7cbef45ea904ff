import PushCore

/// FCM HTTP v1's rules for the body of `messages:send` (https://firebase.google.com/docs/reference/fcm/rest/v1/projects.messages),
/// as the simulator applies them: the JSON envelope `{"message": …, "validate_only": bool}` with no unknown field;
/// exactly one of `token`, `topic` and `condition`; `data` values strings and keys not reserved; `android.priority`
/// `NORMAL` or `HIGH`; `android.ttl` a protobuf Duration (`"3.5s"`); `android` and `android.notification` known fields only, typed; the message at most ``maximumMessageBytes``.
/// Pure: the registration token's state is the service's to judge.
enum FCMMessageRules {
    /// FCM's limit on a message's payload ("Message payloads are limited to 4096 bytes"), applied here to the
    /// `message` object's compact JSON.
    static let maximumMessageBytes = 4096

    /// A refusal: HTTP 400 `INVALID_ARGUMENT`, FCM's message and the fields Google's BadRequest detail names.
    struct Refusal: Error, Sendable, Equatable {
        var message: String
        var fields: [String] = []
    }

    /// Who a valid message is for.
    enum Target: Sendable, Equatable {
        case token(String)
        case topic(String)
        case condition(String)
    }

    /// A valid request.
    struct Valid: Sendable {
        var message: JSONValue
        var target: Target
        var validateOnly: Bool
    }

    private static let envelopeFields: Set<String> = ["message", "validate_only", "validateOnly"]
    private static let messageFields: Set<String> = [
        "name", "data", "notification", "android", "webpush", "apns", "fcm_options", "fcmOptions", "token", "topic", "condition",
    ]
    private static let reservedDataKeys: Set<String> = ["from", "notification", "message_type"]

    static func validate(body: [UInt8]) -> Result<Valid, Refusal> {
        guard let root = try? JSONValue(parsing: body), let pairs = root.objectPairs else {
            return .failure(.init(message: "Invalid JSON payload received. The body is not a JSON object."))
        }
        if let unknown = pairs.first(where: { !envelopeFields.contains($0.0) }) {
            return .failure(.init(message: "Invalid JSON payload received. Unknown name \"\(unknown.0)\": Cannot find field.", fields: [unknown.0]))
        }
        var validateOnly = false
        if let flag = root["validate_only"] ?? root["validateOnly"] {
            guard case .bool(let value) = flag else {
                return .failure(.init(message: "Invalid value at 'validate_only' (TYPE_BOOL)", fields: ["validate_only"]))
            }
            validateOnly = value
        }
        guard let message = root["message"], let fields = message.objectPairs else {
            return .failure(.init(message: "Request contains an invalid argument: message is required", fields: ["message"]))
        }
        if let unknown = fields.first(where: { !messageFields.contains($0.0) }) {
            return .failure(.init(
                message: "Invalid JSON payload received. Unknown name \"\(unknown.0)\" at 'message': Cannot find field.",
                fields: ["message"]))
        }
        let targets = ["token", "topic", "condition"].filter { message[$0] != nil }
        guard targets.count == 1, let name = targets.first else {
            // The field named is the message, not message.token: the token itself is not at fault (a sender's answer
            // rule removes a token only when FCM names it).
            return .failure(.init(message: "Exactly one of message.token, message.topic or message.condition must be given, not \(targets.count)",
                                  fields: ["message"]))
        }
        guard let value = message[name]?.stringValue, !value.isEmpty else {
            return .failure(.init(message: "Invalid value at 'message.\(name)' (TYPE_STRING)", fields: ["message." + name]))
        }
        let target: Target
        switch name {
        case "token": target = .token(value)
        case "topic":
            let topic = value.hasPrefix("/topics/") ? String(value.dropFirst("/topics/".count)) : value
            guard topic.utf8.count <= 900, topic.utf8.allSatisfy(isTopicCharacter), !topic.isEmpty else {
                return .failure(.init(message: "Invalid topic name \(value): [a-zA-Z0-9-_.~%]{1,900}", fields: ["message.topic"]))
            }
            target = .topic(topic)
        default: target = .condition(value)
        }
        if let data = message["data"] {
            guard let entries = data.objectPairs else {
                return .failure(.init(message: "Invalid value at 'message.data' (type.googleapis.com/google.protobuf.Struct)", fields: ["message.data"]))
            }
            for (index, (key, value)) in entries.enumerated() {
                guard value.stringValue != nil else {
                    return .failure(.init(
                        message: "Invalid value at 'message.data[\(index)].value' (TYPE_STRING), \(value.encodedString)",
                        fields: ["message.data[\(index)].value"]))
                }
                if reservedDataKeys.contains(key) || key.hasPrefix("google.") || key.hasPrefix("gcm.") || key.isEmpty {
                    return .failure(.init(message: "Invalid data payload key: \(key)", fields: ["message.data"]))
                }
            }
        }
        if let notification = message["notification"] {
            guard let entries = notification.objectPairs else {
                return .failure(.init(message: "Invalid value at 'message.notification'", fields: ["message.notification"]))
            }
            for (key, value) in entries {
                guard ["title", "body", "image"].contains(key) else {
                    return .failure(.init(message: "Invalid JSON payload received. Unknown name \"\(key)\" at 'message.notification': Cannot find field.",
                                          fields: ["message.notification"]))
                }
                guard value.stringValue != nil else {
                    return .failure(.init(message: "Invalid value at 'message.notification.\(key)' (TYPE_STRING)", fields: ["message.notification.\(key)"]))
                }
            }
        }
        if let android = message["android"] {
            guard android.objectPairs != nil else {
                return .failure(.init(message: "Invalid value at 'message.android'", fields: ["message.android"]))
            }
            if let priority = android["priority"], !["NORMAL", "HIGH"].contains(priority.stringValue ?? "") {
                return .failure(.init(
                    message: "Invalid value at 'message.android.priority' (type.googleapis.com/google.firebase.fcm.v1.AndroidMessagePriority), \(priority.encodedString)",
                    fields: ["message.android.priority"]))
            }
            if let ttl = android["ttl"], !(ttl.stringValue.map(isDuration) ?? false) {
                return .failure(.init(
                    message: "Invalid value at 'message.android.ttl' (type.googleapis.com/google.protobuf.Duration), Field 'ttl', Illegal duration format; duration must end with 's'",
                    fields: ["message.android.ttl"]))
            }
            if let key = android["collapse_key"], key.stringValue == nil {
                return .failure(.init(message: "Invalid value at 'message.android.collapse_key' (TYPE_STRING)", fields: ["message.android.collapse_key"]))
            }
            if let unknown = android.objectPairs?.first(where: { !androidFields.contains($0.0) }) {
                return .failure(.init(
                    message: "Invalid JSON payload received. Unknown name \"\(unknown.0)\" at 'message.android': Cannot find field.",
                    fields: ["message.android"]))
            }
            if let refusal = androidNotificationRefusal(android["notification"]) { return .failure(refusal) }
        }
        let size = message.encoded.count
        guard size <= maximumMessageBytes else {
            return .failure(.init(message: "Message is too big: \(size) bytes; at most \(maximumMessageBytes)", fields: ["message"]))
        }
        return .success(Valid(message: message, target: target, validateOnly: validateOnly))
    }

    /// `AndroidConfig`'s fields (https://firebase.google.com/docs/reference/fcm/rest/v1/projects.messages#androidconfig).
    private static let androidFields: Set<String> = [
        "collapse_key", "collapseKey", "priority", "ttl", "restricted_package_name", "restrictedPackageName", "data",
        "notification", "fcm_options", "fcmOptions", "direct_boot_ok", "directBootOk",
    ]
    /// `AndroidNotification`'s string fields this simulator checks, and its integer `notification_count`
    /// (https://firebase.google.com/docs/reference/fcm/rest/v1/projects.messages#androidnotification); any other
    /// field is refused as unknown.
    private static let androidNotificationStrings: Set<String> = [
        "title", "body", "icon", "color", "sound", "tag", "click_action", "clickAction", "body_loc_key", "title_loc_key",
        "channel_id", "channelId", "ticker", "image",
    ]

    /// Why `message.android.notification` is refused, or nil: an object of known fields, strings where FCM wants
    /// strings, `notification_count` an integer of at least 0.
    private static func androidNotificationRefusal(_ value: JSONValue?) -> Refusal? {
        guard let value else { return nil }
        let at = "message.android.notification"
        guard let entries = value.objectPairs else { return .init(message: "Invalid value at '\(at)'", fields: [at]) }
        for (key, field) in entries {
            if key == "notification_count" || key == "notificationCount" {
                guard let count = field.intValue, count >= 0, count <= Int64(Int32.max) else {
                    return .init(message: "Invalid value at '\(at).\(key)' (TYPE_INT32), \(field.encodedString)", fields: ["\(at).\(key)"])
                }
                continue
            }
            guard androidNotificationStrings.contains(key) else {
                return .init(message: "Invalid JSON payload received. Unknown name \"\(key)\" at '\(at)': Cannot find field.", fields: [at])
            }
            guard field.stringValue != nil else {
                return .init(message: "Invalid value at '\(at).\(key)' (TYPE_STRING), \(field.encodedString)", fields: ["\(at).\(key)"])
            }
        }
        return nil
    }

    /// A protobuf Duration in JSON: seconds with up to nine fractional digits and an `s`, e.g. `"86400s"`, `"3.5s"`.
    static func isDuration(_ text: String) -> Bool {
        guard text.hasSuffix("s") else { return false }
        let number = text.dropLast().split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let whole = number.first, !whole.isEmpty, whole.count <= 12, whole.allSatisfy(\.isASCIIDigitCharacter) else { return false }
        if number.count == 2 {
            let fraction = number[1]
            return !fraction.isEmpty && fraction.count <= 9 && fraction.allSatisfy(\.isASCIIDigitCharacter)
        }
        return true
    }

    private static func isTopicCharacter(_ c: UInt8) -> Bool {
        (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39)
            || [UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"), UInt8(ascii: "%")].contains(c)
    }
}

extension Character {
    fileprivate var isASCIIDigitCharacter: Bool { isASCII && isNumber }
}
