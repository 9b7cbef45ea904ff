import PushCore

extension SenderConfiguration {
    /// This configuration with an app's overrides from the config file applied (`apps.ID.window`,
    /// `apps.ID.connections`, `apps.ID.outageLimitSeconds`).
    public func applying(_ app: AppSettings) -> SenderConfiguration {
        var copy = self
        if let window = app.window {
            copy.window = max(1, window)
        } else if app.unifiedPush != nil {
            copy.window = max(copy.window, Self.unifiedPushWindow)
        }
        if let connections = app.connections { copy.connections = max(1, connections) }
        if let seconds = app.outageLimitSeconds { copy.outageLimitMs = seconds * 1000 }
        return copy
    }

    /// The window of an app with UnifiedPush that sets none (`apps.ID.window` still wins): 2,000 rather than 500.
    /// Why: distributors are many small hosts, some answering a second or more late (a home server), and the engine's
    /// windows bound what a crash may resend — a late answer holds the checkpoint, and once the ahead window
    /// (2 × window) is full every other device waits for it. A window must cover rate × the slowest answer: at 500, one
    /// distributor answering 1 s late held a fast one's devices back 6.8×; at 2,000, 1.00× (median of 3 rounds,
    /// bench/RESULTS.md, "UnifiedPush"). The price: a kill -9 may resend up to 2 × 2,000 instead of 2 × 500 (docs/unifiedpush.md).
    public static let unifiedPushWindow = 2_000
}
