/// What another push service shows of a notification the engine prepared in APNs' form: `aps.alert`'s title,
/// subtitle and body (a string alert is the body), `aps.sound`'s name (a critical sound's `name`) and `aps.badge`.
/// Read once here for every mapping (``WebPushPayload``, ``FCMPayload``).
struct AlertParts {
    var title: String?
    var subtitle: String?
    var body: String?
    var sound: String?
    var badge: Int64?

    /// The parts of `aps` (nil: none).
    init(aps: JSONValue?) {
        switch aps?["alert"] {
        case .string(let text)?: body = text
        case let alert?:
            title = alert["title"]?.stringValue
            subtitle = alert["subtitle"]?.stringValue
            body = alert["body"]?.stringValue
        case nil: break
        }
        sound = switch aps?["sound"] {
        case .string(let name)?: name
        case let object?: object["name"]?.stringValue
        case nil: nil
        }
        badge = aps?["badge"]?.intValue
    }

    /// True when there is text to show.
    var hasText: Bool { title != nil || subtitle != nil || body != nil }
}
