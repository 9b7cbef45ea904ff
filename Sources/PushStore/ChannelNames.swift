/// The channel-name rule for callers outside the store (the HTTP API, the CLI), so they refuse a bad name with
/// the store's own words before anything is written, whatever the backend.
public enum ChannelNames {
    /// Why `name` is not a valid channel name, or nil when it is (the rule registrations apply).
    public static func problem(_ name: String) -> String? {
        do {
            try Channels.validate(name)
            return nil
        } catch {
            return error.message
        }
    }
}
