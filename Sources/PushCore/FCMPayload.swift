/// What an Android device receives: the engine prepares every notification in APNs' form (the job's JSON for the
/// device's locale: `aps.alert` title/subtitle/body, `aps.sound`, `aps.badge`, custom top-level keys), and this one
/// pure function turns it into FCM HTTP v1's request body `{"message": {…}}` for one registration token
/// (docs/fcm.md, "The message"):
///
/// - `aps.alert` title → `notification.title`; subtitle and body → `notification.body` (joined by a line break:
///   Android has no subtitle); a string alert is the body; the custom key `image` (a string) → `notification.image`;
/// - the custom keys `channel_id`, `tag` and `click_action` (strings) → `android.notification` fields of those names,
///   `aps.sound` (a name, or a critical sound's `name`) → `android.notification.sound`, `aps.badge` →
///   `android.notification.notification_count`;
/// - every other custom top-level key → `data`: FCM's data values must be strings, so a string is kept as it is and
///   any other value (number, boolean, null, array, object) is sent as its compact JSON text (`3` → `"3"`,
///   `{"a":1}` → `"{\"a\":1}"`); the app parses it back;
/// - priority: `android.priority` `HIGH` for an alert sent at priority 10, `NORMAL` for one at priority 5 or 1 and for
///   every silent (data-only) message, as Android's docs ask (high priority is for messages that show something);
/// - expiration → `android.ttl` `"Ns"`, the whole seconds left at `nowMs` (never negative; APNs' 0, "now or
///   never", is `"0s"`); none → no `ttl` (FCM keeps a message four weeks);
/// - collapse id → `android.collapse_key`;
/// - a background push (`content-available`), or an alert with no title, subtitle or body, is a **data-only**
///   message: no `notification`, no `android.notification`, the app's `onMessageReceived` gets `data`;
/// - Apple-only push types (VoIP, Live Activities, complications, …) are not sent, with a reason the engine counts.
public enum FCMPayload {
    /// The outcome of mapping one notification.
    public enum Mapping: Sendable, Equatable {
        /// The request body to POST to `messages:send`.
        case send([UInt8])
        /// Not sent to Android devices, and why (one line).
        case skip(String)
    }

    /// The custom keys that become `android.notification` fields rather than `data`.
    public static let androidNotificationKeys: Set<String> = ["channel_id", "tag", "click_action"]

    /// Maps one notification's APNs-form payload for the registration token `token`, at `nowMs`.
    public static func map(
        apnsPayload: [UInt8], pushType: PushType, priority: PushPriority, expiration: Int64?, collapseId: String?,
        token: String, nowMs: Int64
    ) -> Mapping {
        switch pushType {
        case .alert, .background: break
        default: return .skip("FCM has no \(pushType.rawValue) push: only alert and background notifications are sent to Android devices")
        }
        guard let json = try? JSONValue(parsing: apnsPayload), let pairs = json.objectPairs else {
            return .skip("the notification's payload is not a JSON object")
        }
        let parts = AlertParts(aps: json["aps"])
        let (title, sound, badge) = (parts.title, parts.sound, parts.badge)
        let texts = [parts.subtitle, parts.body].compactMap { $0 }
        let shows = pushType == .alert && parts.hasText

        var notification: [(String, JSONValue)] = []
        var androidNotification: [(String, JSONValue)] = []
        var data: [(String, JSONValue)] = []
        if let title { notification.append(("title", .string(title))) }
        if !texts.isEmpty { notification.append(("body", .string(texts.joined(separator: "\n")))) }
        for (key, value) in pairs where key != "aps" {
            if shows, key == "image", let text = value.stringValue { notification.append(("image", .string(text))); continue }
            if shows, androidNotificationKeys.contains(key), let text = value.stringValue {
                androidNotification.append((key, .string(text)))
                continue
            }
            data.append((key, .string(value.stringValue ?? value.encodedString)))
        }
        if shows {
            if let sound { androidNotification.append(("sound", .string(sound))) }
            if let badge, badge >= 0 { androidNotification.append(("notification_count", .int(badge))) }
        }

        var android: [(String, JSONValue)] = []
        if let collapseId { android.append(("collapse_key", .string(collapseId))) }
        android.append(("priority", .string(shows && priority == .immediate ? "HIGH" : "NORMAL")))
        if let expiration { android.append(("ttl", .string("\(secondsLeft(until: expiration, nowMs: nowMs))s"))) }
        if shows, !androidNotification.isEmpty { android.append(("notification", .object(androidNotification))) }

        var message: [(String, JSONValue)] = [("token", .string(token))]
        if shows { message.append(("notification", .object(notification))) }
        if !data.isEmpty { message.append(("data", .object(data))) }
        message.append(("android", .object(android)))
        return .send(JSONValue.object([("message", .object(message))]).encoded)
    }

    /// The whole seconds from `nowMs` until `expiration` (seconds since 1970), never negative: a message's time to live
    /// (Web Push's `TTL`, FCM's `android.ttl`). A partial second counts as gone, so a message never outlives its
    /// expiration.
    public static func secondsLeft(until expiration: Int64, nowMs: Int64) -> Int64 {
        max(0, expiration - (nowMs + 999) / 1000)
    }
}
