import PushCore

extension AppSettings {
    /// The app's APNs settings for what only APNs does (Live Activities, channels, certificates, APNs tokens), or
    /// exit 2 naming the section the app lacks.
    func apnsForCommand(app id: String) throws -> APNsSettings {
        do { return try requireAPNs(app: id) } catch { throw CLIError.usage(error.message) }
    }
}
