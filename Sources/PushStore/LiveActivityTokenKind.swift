/// The two kinds of Live Activity token an app registers.
public enum LiveActivityTokenKind: String, Sendable, CaseIterable, Codable {
    /// A push-to-start token (iOS 17.2+): one per installation and activity attributes type; a `start` event
    /// sent to it starts a new Live Activity.
    case pushToStart = "push-to-start"
    /// An activity's update token: `update` and `end` events for that one activity go to it. Removed when the
    /// activity ends (an `end` was sent, or the app unregistered it) or when APNs answers 410.
    case update

    /// The value stored in the registry's `kind` column.
    var column: String { self == .pushToStart ? "start" : "update" }

    /// The kind a registry `kind` column holds.
    init?(column: String) {
        switch column {
        case "start": self = .pushToStart
        case "update": self = .update
        default: return nil
        }
    }
}
