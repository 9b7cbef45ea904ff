/// What a HarmonyOS NEXT device receives: the engine prepares every notification in APNs' form, and this one pure
/// function turns it into Push Kit's scenario-API request (`POST /v3/{projectId}/messages:send`, Huawei's REST API
/// reference "Request Body Structure" and "Request Body Parameters"; docs/harmonyos.md, "The message", has the table):
/// the body `{"payload":{…},"target":{"token":[…]},"pushOptions":{…}}` and the `push-type` header value.
///
/// - an alert is an **alert message** (push-type 0): `payload.notification` with the app's ``HarmonyOSSettings/category``
///   (always set: without it Push Kit treats the message as marketing), `title` (`aps.alert.title`, else the app's
///   ``HarmonyOSSettings/defaultTitle``; without either it is skipped: the title is required), `body` (subtitle and
///   body joined by a line break; required, so an alert without one is skipped), `image` (the custom key `image`, an
///   `https` URL), `badge` `{"setNum":N}` (`aps.badge` 0…99), `notifyId` (a numeric collapse id: a later
///   notification with the same id replaces it on the device), and `clickAction`: `{"actionType":1,"action":…}` for
///   a custom `click_action`, `{"actionType":1,"uri":…}` for a custom `url`, else `{"actionType":0}` (open the app's
///   home page), with every other custom key in its `data` object (what the app reads from the `Want` it is started
///   with);
/// - a background push (`content-available`) or an alert with no text is a **background message** (push-type 6):
///   `payload.extraData`, the compact JSON text of the custom keys (at least `{}`), handed to the app's
///   `pushService.receiveMessage` when it runs;
/// - expiration → `pushOptions.ttl` (the whole seconds left, at most Push Kit's 15 days); none → Huawei's default
///   (one day);
/// - Apple-only push types (VoIP, Live Activities, …) are not sent, with a reason the engine counts.
public enum HarmonyOSPayload {
    /// The outcome of mapping one notification: a body and its push-type, or a reason not to send.
    public enum Mapping: Sendable, Equatable {
        /// Send `body` with the header `push-type: pushType`.
        case send(body: [UInt8], pushType: Int)
        /// Do not send; the reason is counted.
        case skip(String)
    }

    /// The push-type of an alert message (notification).
    public static let alertPushType = 0
    /// The push-type of a background message.
    public static let backgroundPushType = 6
    /// Push Kit's longest `ttl`: 15 days.
    public static let maximumTTLSeconds: Int64 = 1_296_000
    /// The custom keys that shape the notification rather than going into `clickAction.data`.
    public static let notificationKeys: Set<String> = ["image", "click_action", "url"]

    /// Maps one notification's APNs-form payload for the push token `token`, at `nowMs`.
    public static func map(
        apnsPayload: [UInt8], pushType: PushType, expiration: Int64?, collapseId: String?, token: String,
        settings: HarmonyOSSettings, nowMs: Int64
    ) -> Mapping {
        switch pushType {
        case .alert, .background: break
        default:
            return .skip("Push Kit has no \(pushType.rawValue) push for HarmonyOS: only alert and background notifications are sent to HarmonyOS devices")
        }
        guard let json = try? JSONValue(parsing: apnsPayload), let pairs = json.objectPairs else {
            return .skip("the notification's payload is not a JSON object")
        }
        let parts = AlertParts(aps: json["aps"])
        let texts = [parts.subtitle, parts.body].compactMap { $0 }
        let shows = pushType == .alert && parts.hasText
        let title = parts.title ?? settings.defaultTitle
        if shows, title == nil {
            return .skip("Push Kit requires a notification title: the alert has none and apps.ID.harmonyos.defaultTitle is not set")
        }
        if shows, texts.isEmpty {
            return .skip("Push Kit requires a notification body: the alert has only a title")
        }

        var custom: [String: String] = [:]
        var data: [(String, JSONValue)] = []
        for (key, value) in pairs where key != "aps" {
            if shows, notificationKeys.contains(key), let text = value.stringValue {
                custom[key] = text
                continue
            }
            data.append((key, value))
        }

        var options: [(String, JSONValue)] = []
        if let expiration {
            options.append(("ttl", .int(min(FCMPayload.secondsLeft(until: expiration, nowMs: nowMs), maximumTTLSeconds))))
        }
        let target: JSONValue = .object([("token", .array([.string(token)]))])

        guard shows, let title else {
            let payload: JSONValue = .object([("extraData", .string(JSONValue.object(data).encodedString))])
            return .send(body: body(payload, target, options), pushType: backgroundPushType)
        }
        var notification: [(String, JSONValue)] = [
            ("category", .string(settings.category)), ("title", .string(title)), ("body", .string(texts.joined(separator: "\n"))),
        ]
        if let image = custom["image"], image.hasPrefix("https://") { notification.append(("image", .string(image))) }
        var click: [(String, JSONValue)]
        if let action = custom["click_action"] {
            click = [("actionType", .int(1)), ("action", .string(action))]
        } else if let uri = custom["url"] {
            click = [("actionType", .int(1)), ("uri", .string(uri))]
        } else {
            click = [("actionType", .int(0))]
        }
        if !data.isEmpty { click.append(("data", .object(data))) }
        notification.append(("clickAction", .object(click)))
        if let badge = parts.badge, (0...99).contains(badge) { notification.append(("badge", .object([("setNum", .int(badge))]))) }
        if let collapseId, let number = Int64(collapseId), (0...Int64(Int32.max)).contains(number) {
            notification.append(("notifyId", .int(number)))
        }
        let payload: JSONValue = .object([("notification", .object(notification))])
        return .send(body: body(payload, target, options), pushType: alertPushType)
    }

    private static func body(_ payload: JSONValue, _ target: JSONValue, _ options: [(String, JSONValue)]) -> [UInt8] {
        var root: [(String, JSONValue)] = [("payload", payload), ("target", target)]
        if !options.isEmpty { root.append(("pushOptions", .object(options))) }
        return JSONValue.object(root).encoded
    }
}
