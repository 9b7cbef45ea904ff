import PushCore

extension SenderConfiguration {
    /// This configuration with an app's overrides from the config file applied (`apps.ID.window`,
    /// `apps.ID.connections`, `apps.ID.outageLimitSeconds`).
    public func applying(_ app: AppSettings) -> SenderConfiguration {
        var copy = self
        if let window = app.window { copy.window = max(1, window) }
        if let connections = app.connections { copy.connections = max(1, connections) }
        if let seconds = app.outageLimitSeconds { copy.outageLimitMs = seconds * 1000 }
        return copy
    }
}

