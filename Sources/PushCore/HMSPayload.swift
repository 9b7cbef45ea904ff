/// What an HMS Core device receives: the engine prepares every notification in APNs' form, and this one pure function
/// turns it into Push Kit's request body `{"validate_only":false,"message":{…,"token":[…]}}` (Huawei, "Sending
/// Downlink Messages", developer.huawei.com/consumer/en/doc/HMSCore-References/https-send-api-0000001050986197;
/// docs/hms.md, "The message", has the table):
///
/// - `aps.alert` title → `android.notification.title` (else the app's ``HMSSettings/defaultTitle``; without either
///   the notification is skipped: Push Kit shows none without a title); subtitle and body →
///   `android.notification.body` (joined by a line break);
/// - the custom key `image` (an `https` URL) → `android.notification.image`; `channel_id` and `tag` (strings) →
///   the fields of those names; `click_action` (a string) → `click_action` `{"type":1,"action":…}` (an intent action
///   the app declares), else `url` (an `https` URL) → `{"type":2,"url":…}`, else `{"type":3}` (open the app);
/// - `aps.sound` `default` → `default_sound: true`; another name → `sound: "/raw/<name without extension>"` (Push Kit
///   plays a file of the app's `res/raw`); `aps.badge` → `badge` `{"set_num":N,"class":…}` when the app names its
///   launcher activity (``HMSSettings/badgeClass``) and N is 0…99;
/// - every other custom top-level key → `data`: Push Kit's `data` is one string, so the keys go as the text of one
///   compact JSON object (`{"order":"A1","n":3}`), which the app reads from `RemoteMessage.getData()`;
/// - priority: `android.urgency` `HIGH` for an alert at priority 10, `NORMAL` otherwise and for every data message;
/// - expiration → `android.ttl` `"Ns"` (the whole seconds left, never negative); none → no `ttl` (Huawei's default);
/// - collapse id → `android.collapse_key` when it is a number 0…100 (Push Kit collapses by number), else the
///   notification's `tag` (a later notification with the same tag replaces it on the device) unless a `tag` is set;
/// - ``HMSSettings/category`` → `android.category`;
/// - a background push (`content-available`), or an alert with no text, is a **data message**: `data` only (at least
///   `{}`), no `notification`, delivered to the app's `onMessageReceived`;
/// - Apple-only push types (VoIP, Live Activities, …) are not sent, with a reason the engine counts.
public enum HMSPayload {
    /// The outcome of mapping one notification: a body to send, or a reason not to (the same two outcomes as FCM's).
    public typealias Mapping = FCMPayload.Mapping

    /// The custom keys that become `android.notification` fields rather than `data`.
    public static let notificationKeys: Set<String> = ["image", "channel_id", "tag", "click_action", "url"]

    /// Maps one notification's APNs-form payload for the push token `token`, at `nowMs`.
    public static func map(
        apnsPayload: [UInt8], pushType: PushType, priority: PushPriority, expiration: Int64?, collapseId: String?,
        token: String, settings: HMSSettings, nowMs: Int64
    ) -> Mapping {
        switch pushType {
        case .alert, .background: break
        default:
            return .skip("Push Kit has no \(pushType.rawValue) push: only alert and background notifications are sent to HMS devices")
        }
        guard let json = try? JSONValue(parsing: apnsPayload), let pairs = json.objectPairs else {
            return .skip("the notification's payload is not a JSON object")
        }
        let parts = AlertParts(aps: json["aps"])
        let texts = [parts.subtitle, parts.body].compactMap { $0 }
        let shows = pushType == .alert && parts.hasText
        let title = parts.title ?? settings.defaultTitle
        if shows, title == nil {
            return .skip("Push Kit shows no notification without a title: the alert has none and apps.ID.hms.defaultTitle is not set")
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

        var android: [(String, JSONValue)] = []
        var tag = custom["tag"]
        if let collapseId {
            if let number = Int64(collapseId), (0...100).contains(number) {
                android.append(("collapse_key", .int(number)))
            } else if tag == nil {
                tag = collapseId
            }
        }
        android.append(("urgency", .string(shows && priority == .immediate ? "HIGH" : "NORMAL")))
        if let category = settings.category { android.append(("category", .string(category))) }
        if let expiration { android.append(("ttl", .string("\(FCMPayload.secondsLeft(until: expiration, nowMs: nowMs))s"))) }

        if shows, let title {
            var notification: [(String, JSONValue)] = [("title", .string(title)), ("body", .string(texts.joined(separator: "\n")))]
            if let image = custom["image"], image.hasPrefix("https://") { notification.append(("image", .string(image))) }
            if let channel = custom["channel_id"] { notification.append(("channel_id", .string(channel))) }
            if let tag { notification.append(("tag", .string(tag))) }
            if let sound = parts.sound {
                if sound == "default" {
                    notification.append(("default_sound", .bool(true)))
                } else {
                    let name = sound.split(separator: ".", omittingEmptySubsequences: false).first.map(String.init) ?? sound
                    notification.append(("default_sound", .bool(false)))
                    notification.append(("sound", .string("/raw/\(name)")))
                }
            }
            if let badge = parts.badge, (0...99).contains(badge), let badgeClass = settings.badgeClass {
                notification.append(("badge", .object([("set_num", .int(badge)), ("class", .string(badgeClass))])))
            }
            let click: JSONValue = if let action = custom["click_action"] {
                .object([("type", .int(1)), ("action", .string(action))])
            } else if let url = custom["url"], url.hasPrefix("https://") {
                .object([("type", .int(2)), ("url", .string(url))])
            } else {
                .object([("type", .int(3))])
            }
            notification.append(("click_action", click))
            android.append(("notification", .object(notification)))
        }

        var message: [(String, JSONValue)] = []
        if !data.isEmpty || !shows { message.append(("data", .string(JSONValue.object(data).encodedString))) }
        message.append(("android", .object(android)))
        message.append(("token", .array([.string(token)])))
        return .send(JSONValue.object([("validate_only", .bool(false)), ("message", .object(message))]).encoded)
    }
}
