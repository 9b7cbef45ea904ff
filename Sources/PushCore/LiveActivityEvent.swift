/// The `event` of an ActivityKit push notification (`aps.event`).
public enum LiveActivityEvent: String, Sendable, CaseIterable {
    /// Start a new Live Activity (push-to-start, iOS 17.2+).
    case start
    /// Update a running Live Activity.
    case update
    /// End a Live Activity.
    case end
}
