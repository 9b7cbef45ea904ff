/// What a web device receives: the engine prepares every notification in APNs' form (the job's JSON for the
/// device's locale: `aps.alert` title/subtitle/body, `aps.sound`, `aps.badge`, custom top-level keys), and this
/// one pure function turns it into the JSON a Web Push message carries (docs/webpush.md, "The payload"):
///
/// - the **service-worker form** every browser's service worker reads in its `push` event:
///   `{"id","title","subtitle","body","sound","badge","image","url","tag","data"}` — `id` is the notification's
///   apns-id (the same on every attempt, so a service worker can drop a duplicate), `tag` its collapse id, `url`
///   and `image` the custom keys of those names (strings), `data` every other custom key; absent fields are left out;
/// - per app, Apple's **Declarative Web Push** form (Safari 18.4+; WebKit's "Meet Declarative Web Push" and the Push
///   API's declarative push message), shown by the browser with no service worker:
///   `{"web_push":8030,"notification":{"title","body","navigate","tag","image","silent","data"},"app_badge"}`.
///   `title` and `navigate` are required there: a notification without a title or a `url` is sent in the
///   service-worker form instead (which Safari hands to the service worker like any other browser does).
///
/// Web Push has no silent push: a background push (or an alert-less `content-available` one), an alert without text
/// (badge or sound only) and Apple-only push types (VoIP, Live Activities, …) are not sent, with a reason the engine
/// counts.
public enum WebPushPayload {
    /// The outcome of mapping one notification.
    public enum Mapping: Sendable, Equatable {
        /// The JSON to encrypt and send.
        case send([UInt8])
        /// Not sent to web devices, and why (one line).
        case skip(String)
    }

    /// The Declarative Web Push magic number (RFC 8030's number).
    public static let declarativeMagic: Int64 = 8030
    /// The reason a silent push is not sent.
    public static let silentReason = "Web Push has no silent push: a background (content-available) notification is not sent to web devices"

    /// The reason an alert without text (a badge or sound only) is not sent: a browser shows every push message as a
    /// notification, so it would show an empty one (and Safari ends a subscription whose pushes show nothing).
    public static let noTextReason = "Web Push shows every message as a notification: an alert without a title, subtitle or body (badge or sound only) is not sent to web devices"

    /// Maps one notification's APNs-form payload. `declarative` is the app's choice of Apple's declarative form.
    /// `unifiedPush`: the message goes to an Android app's own code (UnifiedPush, AND_3.0.0), not to a browser that
    /// must show it, so a background push is sent (a message without `title`: the app's data message) and so is an
    /// alert without text; the form is the service-worker one.
    public static func map(
        apnsPayload: [UInt8], pushType: PushType, id: String, collapseId: String?, declarative: Bool, unifiedPush: Bool = false
    ) -> Mapping {
        switch pushType {
        case .alert: break
        case .background where unifiedPush: break
        case .background: return .skip(silentReason)
        default: return .skip("Web Push has no \(pushType.rawValue) push: only alert notifications are sent to web devices")
        }
        guard let json = try? JSONValue(parsing: apnsPayload), let pairs = json.objectPairs else {
            return .skip("the notification's payload is not a JSON object")
        }
        let aps = json["aps"]
        let parts = AlertParts(aps: aps)
        let (title, subtitle, body, sound, badge) = (parts.title, parts.subtitle, parts.body, parts.sound, parts.badge)
        if !parts.hasText && !unifiedPush {
            return .skip(aps?["content-available"]?.intValue == 1 ? silentReason : noTextReason)
        }
        var url: String?
        var image: String?
        var data: [(String, JSONValue)] = []
        for (key, value) in pairs where key != "aps" {
            if key == "url", let text = value.stringValue { url = text; continue }
            if key == "image", let text = value.stringValue { image = text; continue }
            data.append((key, value))
        }
        if declarative, !unifiedPush, let title, let url {
            var notification: [(String, JSONValue)] = [("title", .string(title))]
            let text = [subtitle, body].compactMap { $0 }.joined(separator: "\n")
            if !text.isEmpty { notification.append(("body", .string(text))) }
            notification.append(("navigate", .string(url)))
            if let collapseId { notification.append(("tag", .string(collapseId))) }
            if let image { notification.append(("image", .string(image))) }
            if sound == nil { notification.append(("silent", .bool(true))) }
            notification.append(("data", .object([("id", .string(id))] + data)))
            var message: [(String, JSONValue)] = [("web_push", .int(declarativeMagic)), ("notification", .object(notification))]
            if let badge, badge >= 0 { message.append(("app_badge", .int(badge))) }
            return .send(JSONValue.object(message).encoded)
        }
        var message: [(String, JSONValue)] = [("id", .string(id))]
        func add(_ key: String, _ value: String?) { if let value { message.append((key, .string(value))) } }
        add("title", title)
        add("subtitle", subtitle)
        add("body", body)
        add("sound", sound)
        if let badge { message.append(("badge", .int(badge))) }
        add("image", image)
        add("url", url)
        add("tag", collapseId)
        if !data.isEmpty { message.append(("data", .object(data))) }
        return .send(JSONValue.object(message).encoded)
    }
}
